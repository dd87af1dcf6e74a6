# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The README's first Python example as a torch_npu script runs it: with
torch_npu imported, `steptime.step()` marks on its current stream, so each
step has device time; `index=` numbers them from a resumed job's step.

    torch_step.py STEPS FIRST_INDEX
"""
import sys

import torch
import torch_npu

import steptime

steps, first = int(sys.argv[1]), int(sys.argv[2])
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                            torch.nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(64, 16), torch.randn(64, 1)
for i in range(steps):
    with steptime.step(index=first + i) as s:
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    if s.errors:
        sys.exit("torch_step: marks not recorded: %s" % s.errors)
torch_npu.npu.synchronize()
steptime.flush()
print("torch_step: %d steps from %d" % (steps, first))
