#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A PyTorch-shaped training loop marked with steptime.

data -> forward -> backward -> optimizer, one steptime step per iteration.
On npusim (/dev/npusim_manager) every phase submits tasks through the HAL
and the step marks are ordered on the stream; elsewhere the phases sleep.
At the end the loop prints its own steps as steptime recorded them.

    PYTHONPATH=python examples/torch_like.py --steps 5
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))
import steptime  # noqa: E402
from steptime import npusim  # noqa: E402

TASK_NS = 100000


class Model:
    """Layers are batches of device tasks; backward is twice forward."""

    def __init__(self, stream, layers):
        self.stream = stream
        self.layers = layers

    def _run(self, ntasks):
        if self.stream:
            self.stream.submit(ntasks, duration_ns=TASK_NS)
        else:
            time.sleep(ntasks * TASK_NS / 1e9)

    def forward(self, batch):
        self._run(self.layers)
        return batch

    def backward(self, loss):
        self._run(2 * self.layers)

    def optimizer_step(self):
        self._run(1)


def data_loader(n, load_s):
    for i in range(n):
        time.sleep(load_s)            # host work: steptime's "gap"
        yield i


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--load-ms", type=float, default=2.0)
    args = ap.parse_args()

    dev = stream = None
    if npusim.available():
        dev = npusim.Device()
        stream = dev.stream()
    model = Model(stream, args.layers)
    errors = set()
    for batch in data_loader(args.steps, args.load_ms / 1000):
        with steptime.step(stream=stream) as st:
            loss = model.forward(batch)
            model.backward(loss)
            model.optimizer_step()
        errors.update(st.errors)
        if stream:
            stream.sync()             # like loss.item(): wait for the device

    if errors:
        print("torch_like: marks not recorded (%s): is steptime loaded?"
              % ", ".join(os.strerror(-e) for e in sorted(errors)))
    else:
        time.sleep(0.1)
        try:
            for s in steptime.steps(pid=os.getpid(), last=args.steps):
                dev_us = (s["device_time_ns"] or 0) / 1000
                host_us = (s["host_time_ns"] or 0) / 1000
                print("step %-4d %-10s host %8.1f us  device %8.1f us  "
                      "tasks %d" % (s["index_id"], s["state"], host_us,
                                    dev_us, s["tasks"]))
        except OSError as e:
            print("torch_like: cannot read steps: %s" % e)
    if stream:
        stream.close()
        dev.close()
    print("torch_like: %d steps%s" % (args.steps,
                                      " on npusim" if stream else " (host only)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
