#!/bin/sh
# PyTorch modules through tessel.from_torch: tests/python/test_torch.py.
exec sh "${TS_SRCDIR:-.}/tests/python/run.sh" test_torch
