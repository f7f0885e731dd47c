"""PyTorch modules through tessel.from_torch: a LeNet and an MLP exported
with PyTorch's own exporter, imported, compiled for this machine, and
compared with what PyTorch computes."""

import unittest

import numpy as np
import torch
from torch import nn

import tessel


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = torch.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = torch.max_pool2d(torch.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return self.fc3(x)


def mlp():
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128),
                         nn.GELU(), nn.Linear(128, 10), nn.Softmax(dim=1))


class FromTorch(unittest.TestCase):
    def check(self, module, x):
        torch.manual_seed(0)
        module.eval()
        prog = tessel.from_torch(module, (x,))
        with torch.no_grad():
            want = module(x).numpy()
        got = prog(x.numpy())
        self.assertIsInstance(got, np.ndarray)
        self.assertEqual(got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        # A tensor is taken as it is, and the interpreter agrees.
        np.testing.assert_allclose(prog(x), got, rtol=0, atol=0)
        np.testing.assert_allclose(prog.eval(x), want, rtol=1e-4,
                                   atol=1e-5)
        return prog

    def test_lenet__matches_pytorch(self):
        torch.manual_seed(1)
        self.check(LeNet(), torch.randn(2, 1, 28, 28))

    def test_mlp__matches_pytorch(self):
        torch.manual_seed(2)
        prog = self.check(mlp(), torch.randn(4, 64))
        # The same object schedules and builds.
        k = prog.compile(threads=1)
        x = np.random.default_rng(3).standard_normal((4, 64)).astype(
            np.float32)
        np.testing.assert_allclose(k(x), prog(x), rtol=1e-5, atol=1e-6)

    def test_mlp__tuned_kernel_matches(self):
        torch.manual_seed(4)
        module = nn.Sequential(nn.Linear(32, 32), nn.ReLU()).eval()
        x = torch.randn(8, 32)
        prog = tessel.from_torch(module, x)
        t = prog.tune(trials=4, batch=4, quiet=True)
        with torch.no_grad():
            want = module(x).numpy()
        np.testing.assert_allclose(t.compile()(x.numpy()), want, rtol=1e-4,
                                   atol=1e-5)

    def test_wrong_input__error_names_argument(self):
        prog = tessel.from_torch(mlp().eval(), torch.randn(4, 64))
        with self.assertRaises(tessel.Error) as cm:
            prog(np.zeros((4, 63), np.float32))
        self.assertIn("given shape (4, 63)", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
