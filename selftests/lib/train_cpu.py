# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A small PyTorch CPU training loop that knows nothing of steptime.

    train_cpu.py [--steps N] [--accum K] [--adam] [--npu]
K forward/backward passes per optimizer step (gradient accumulation).
--npu: import torch_npu first, as an NPU script does (in the tests, the
stand-in of selftests/lib/npu_standin on PYTHONPATH, whose modules run on
npusim), and synchronize its stream at the end.
"""
import argparse

import torch

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=5)
p.add_argument("--accum", type=int, default=1)
p.add_argument("--adam", action="store_true")
p.add_argument("--npu", action="store_true")
a = p.parse_args()
if a.npu:
    import torch_npu

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                            torch.nn.Linear(32, 1))
opt = (torch.optim.Adam if a.adam else torch.optim.SGD)(model.parameters(),
                                                        lr=0.01)
x, y = torch.randn(64, 16), torch.randn(64, 1)
for step in range(a.steps):
    opt.zero_grad()
    for _ in range(a.accum):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
    opt.step()
if a.npu:
    torch_npu.npu.synchronize()
print("trained %d steps, loss %.4f" % (a.steps, loss.item()))
