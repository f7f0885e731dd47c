#!/usr/bin/python3
"""Models and modules exported from PyTorch, through `tessel run`.

Each case is a module in eval mode (random weights, seed 0, batch norms
given the statistics of a random batch) and its inputs (batch 1, small
images where the model allows).  For each opset asked, it is exported
with torch.onnx.export, run by `tessel run MODEL.onnx --inputs DIR --out
DIR` (the importer, then the compiled static schedule, one thread) on the
same inputs as PyTorch, and the outputs are compared: within rtol 1e-3
plus atol 1e-4 times the output's largest magnitude, integers exactly;
the relative error reported is the largest error over that magnitude.
With --dynamic batch the batch is exported as a symbolic dimension, fixed
by `--shape batch=N`; with --dynamic all, every dimension, fixed by
`--shape NAME=DIMS`.  --cases takes names, "models" (torchvision's),
"modules" (the others), "all", or "quick": the runs of QUICK, each with
its own opset and symbolic dimensions (what `make check` runs).

One row per run: imported, matched, the max abs and rel errors, the
seconds of `tessel run` (import, compilation, one run).  A refusal by the
exporter, or a difference that is the exporter's (EXPORT_DIFFERS), is
reported but not counted.  Exit 0 when every other run matches, 1
otherwise, 77 when torch cannot be imported.

usage: torch_models.py [--build DIR] [--cases a,b|quick|models|modules|all]
                       [--opsets 11,13,17] [--dynamic batch|all]
                       [--no-folding] [--initializers-as-inputs] [--batch N]
                       [--work DIR] [-v]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

try:
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:
    print("SKIP: %s" % e)
    sys.exit(77)
try:
    import torchvision
except ImportError:
    torchvision = None

warnings.filterwarnings("ignore")


def image(c=3, h=64, w=None):
    return (torch.randn(1, c, h, w or h),)


# Small modules: one or a few torch functions each.

class Interp(nn.Module):
    def __init__(self, mode, align=None, scale=None, size=None):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.kw = dict(mode=mode, scale_factor=scale, size=size)
        if align is not None:
            self.kw["align_corners"] = align

    def forward(self, x):
        return F.interpolate(self.conv(x), **self.kw)


class Seq(nn.Module):
    """Layers applied one after the other, any callables."""
    def __init__(self, *fs):
        super().__init__()
        self.mods = nn.ModuleList(f for f in fs if isinstance(f, nn.Module))
        self.fs = fs

    def forward(self, x):
        for f in self.fs:
            x = f(x)
        return x


class Rnn(nn.Module):
    def __init__(self, cls, **kw):
        super().__init__()
        self.rnn = cls(8, 12, **kw)

    def forward(self, x):
        return self.rnn(x)[0]


class Mha(nn.Module):
    def __init__(self, mask):
        super().__init__()
        self.att = nn.MultiheadAttention(16, 4, batch_first=True)
        self.mask = mask

    def forward(self, x):
        m = None
        if self.mask:
            n = x.shape[1]
            m = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
        return self.att(x, x, x, attn_mask=m, need_weights=False)[0]


class Lambda(nn.Module):
    """A function of the inputs, after a linear layer on the first so
    that the model has weights."""
    def __init__(self, f, width=None):
        super().__init__()
        self.f = f
        self.lin = nn.Linear(width, width) if width else None

    def forward(self, *xs):
        if self.lin is not None:
            xs = (self.lin(xs[0]),) + xs[1:]
        return self.f(*xs)


def topk(x):
    v, i = torch.topk(x, 3, dim=-1)
    return v, i


def masked(x):
    return x.masked_fill(x > 0.5, float("-inf")).softmax(-1)


def chunks(x):
    a, b = x.chunk(2, dim=1)
    c, d, e = x.split([1, 2, 3], dim=-1)
    return a * b.sigmoid(), torch.cat([e, c, d], -1)


def redraw_zeros(m):
    """Weights that a model initialises to zero (ViT's head) drawn at
    random: a zero layer would hide everything before it."""
    for p in m.parameters():
        if p.dim() > 1 and not p.detach().any():
            nn.init.normal_(p.data, std=p.shape[-1] ** -0.5)
    return m


def vision(name, **kw):
    def make():
        torch.manual_seed(0)
        return redraw_zeros(getattr(torchvision.models, name)(
            weights=None, **kw))
    return make


def segm(name, **kw):
    def make():
        torch.manual_seed(0)
        m = getattr(torchvision.models.segmentation, name)(
            weights=None, weights_backbone=None, **kw)
        return Seq(m, lambda d: d["out"])
    return make


def vit():
    from torchvision.models.vision_transformer import VisionTransformer
    torch.manual_seed(0)
    m = VisionTransformer(image_size=64, patch_size=16, num_layers=2,
                          num_heads=4, hidden_dim=64, mlp_dim=128,
                          num_classes=10)
    return redraw_zeros(m)


# name -> (make the module, make its inputs)
CASES = {
    "interp_nearest": (lambda: Interp("nearest", scale=2), image),
    "interp_bilinear": (lambda: Interp("bilinear", False, scale=2), image),
    "interp_bilinear_ac": (lambda: Interp("bilinear", True, size=(13, 21)),
                           image),
    "interp_bicubic": (lambda: Interp("bicubic", False, scale=1.5), image),
    "groupnorm": (lambda: Seq(nn.Conv2d(3, 8, 3), nn.GroupNorm(4, 8)),
                  image),
    "layernorm": (lambda: Seq(nn.Linear(16, 16), nn.LayerNorm(16)),
                  lambda: (torch.randn(1, 5, 16),)),
    "instancenorm": (lambda: Seq(nn.Conv2d(3, 8, 3),
                                 nn.InstanceNorm2d(8, affine=True)),
                     image),
    "pixelshuffle": (lambda: Seq(nn.Conv2d(3, 16, 3), nn.PixelShuffle(2),
                                 nn.PixelUnshuffle(4)), image),
    "convtranspose": (lambda: Seq(nn.ConvTranspose2d(3, 6, 4, stride=2,
                                                     padding=1),
                                  nn.ConvTranspose2d(6, 4, 3, stride=2,
                                                     padding=1,
                                                     output_padding=1,
                                                     groups=2)),
                      lambda: image(h=16)),
    "conv1d": (lambda: Seq(nn.Conv1d(4, 8, 5, padding=2, dilation=1),
                           nn.Conv1d(8, 8, 3, stride=2, groups=4),
                           nn.MaxPool1d(2), nn.AvgPool1d(2)),
               lambda: (torch.randn(1, 4, 50),)),
    "conv3d": (lambda: Seq(nn.Conv3d(2, 4, 3, padding=1),
                           nn.MaxPool3d(2), nn.AdaptiveAvgPool3d(1)),
               lambda: (torch.randn(1, 2, 8, 8, 8),)),
    "maxpool_ceil": (lambda: Seq(nn.Conv2d(3, 4, 3),
                                 nn.MaxPool2d(3, 2, ceil_mode=True),
                                 nn.AvgPool2d(3, 2, ceil_mode=True,
                                              count_include_pad=False)),
                     lambda: image(h=20)),
    "adaptive_pool": (lambda: Seq(nn.Conv2d(3, 4, 3),
                                  nn.AdaptiveAvgPool2d((4, 4))),
                      lambda: image(h=18)),
    "adaptive_pool_uneven": (lambda: Seq(nn.Conv2d(3, 4, 3),
                                         nn.AdaptiveAvgPool2d((5, 3))),
                             lambda: image(h=17)),
    "adaptive_maxpool": (lambda: Seq(nn.Conv2d(3, 4, 3),
                                     nn.AdaptiveMaxPool2d((4, 4))),
                         lambda: image(h=18)),
    "lstm": (lambda: Rnn(nn.LSTM, num_layers=2, batch_first=True),
             lambda: (torch.randn(1, 7, 8),)),
    "lstm_bidir": (lambda: Rnn(nn.LSTM, bidirectional=True),
                   lambda: (torch.randn(7, 1, 8),)),
    "gru": (lambda: Rnn(nn.GRU, batch_first=True),
            lambda: (torch.randn(1, 7, 8),)),
    "gru_bidir": (lambda: Rnn(nn.GRU, num_layers=2, bidirectional=True),
                  lambda: (torch.randn(7, 1, 8),)),
    "rnn_tanh": (lambda: Rnn(nn.RNN), lambda: (torch.randn(7, 1, 8),)),
    "mha": (lambda: Mha(False), lambda: (torch.randn(1, 6, 16),)),
    "mha_causal": (lambda: Mha(True), lambda: (torch.randn(1, 6, 16),)),
    "cumsum": (lambda: Lambda(lambda x: torch.cumsum(x, 1), 8),
               lambda: (torch.randn(1, 5, 8),)),
    "topk": (lambda: Lambda(topk, 8), lambda: (torch.randn(1, 5, 8),)),
    "masked_fill": (lambda: Lambda(masked, 8),
                    lambda: (torch.randn(1, 5, 8),)),
    "einsum": (lambda: Lambda(lambda a, b: torch.einsum("bij,bjk->bik",
                                                        a, b), 8),
               lambda: (torch.randn(1, 5, 8), torch.randn(1, 8, 3))),
    "einsum_attn": (lambda: Lambda(lambda q, k: torch.einsum(
                        "bhqd,bhkd->bhqk", q, k), 8),
                    lambda: (torch.randn(1, 2, 5, 8),
                             torch.randn(1, 2, 7, 8))),
    "chunk_split": (lambda: Lambda(chunks, 6),
                    lambda: (torch.randn(1, 4, 6),)),
    "matmul_bcast": (lambda: Lambda(torch.matmul, 8),
                     lambda: (torch.randn(1, 3, 5, 8),
                              torch.randn(2, 1, 8, 4))),
    "matmul_vec": (lambda: Lambda(lambda a, b: (a @ b, b.transpose(-1, -2)
                                                @ a.transpose(-1, -2)), 8),
                   lambda: (torch.randn(1, 8), torch.randn(3, 8, 2))),
    "activations": (lambda: Seq(nn.Linear(16, 16), nn.Hardswish(),
                                nn.Linear(16, 16), nn.Hardsigmoid(),
                                nn.Linear(16, 16), nn.SiLU(),
                                nn.Linear(16, 16), nn.Mish(),
                                nn.Linear(16, 16), nn.GELU("tanh"),
                                nn.Linear(16, 16), nn.GELU(),
                                nn.Linear(16, 16), nn.ELU(), nn.SELU(),
                                nn.Softplus(), nn.LeakyReLU(0.1),
                                nn.PReLU(), nn.ReLU6(), nn.Tanh(),
                                nn.LogSoftmax(-1)),
                    lambda: (torch.randn(1, 4, 16) * 3,)),
    "embedding": (lambda: Seq(nn.Embedding(20, 8), nn.Linear(8, 4)),
                  lambda: (torch.tensor([[1, 5, 19, 0, 7]]),)),
    "transformer_dec": (lambda: nn.TransformerDecoderLayer(
                            32, 4, 64, batch_first=True, norm_first=True),
                        lambda: (torch.randn(1, 5, 32),
                                 torch.randn(1, 7, 32))),
}


def gathers(x):
    i = torch.tensor([2, 0, 1])
    return (x.index_select(1, i), x[:, 1:, ::2], x[..., -1], x.flip(-1),
            torch.roll(x, 2, -1), x.gather(-1, x.argsort(-1)[..., :2]))


def reductions(x):
    return (x.std(-1, keepdim=True), x.var(1), x.norm(dim=-1),
            F.normalize(x, dim=-1), x.logsumexp(-1), x.amax((1, 2)),
            x.max(-1)[1], x.argmin(1), x.prod(-1), x.mean((0, 2)))


def math_ops(x):
    return (torch.where(x > 0, x, x * 0.1).clamp(-0.5, 0.8), x.sign(),
            torch.round(x * 4), torch.floor(x), torch.erf(x), x.abs().sqrt(),
            x.exp().log1p(), torch.remainder(x * 5, 3),
            # PyTorch 1.13 floors, but exports a truncation: positive only.
            torch.floor_divide(x.abs() * 5, 2), torch.atan(x),
            x.reciprocal(),
            x.pow(3), torch.rsqrt(x.abs() + 1), x.to(torch.int32))


def shapes(x):
    b = x.shape[0]
    y = x.view(b, -1, 2).permute(0, 2, 1).contiguous()
    z = torch.stack(x.unbind(1), -1).flatten(1)
    return y.repeat(1, 2, 1), z.unsqueeze(1).expand(b, 3, -1), \
        x.new_zeros(x.shape[1:]) + x.sum(0), \
        torch.arange(x.shape[-1], dtype=torch.float32) * x


def scatters(x):
    # ONNX's scatters take as many updates as indices: one row each.
    i = torch.tensor([[0, 2, 1, 3]]).expand(x.shape[0], 4)
    y = torch.zeros(x.shape[0], 6).scatter(1, i, x[:, :4])
    # Before opset 16 PyTorch exports scatter_add as a scatter and an
    # Add: only right with indices that do not repeat.
    z = torch.ones(x.shape[0], 6).scatter_add(1, i.flip(1), x[:, :4])
    x = x.clone()
    x[:, 1:3] = 0.5
    return y, z, x


def sort_ops(x):
    v, i = x.sort(-1, descending=True)
    return v, i


def squeezes(x):
    return x.squeeze(0).squeeze(-1), x[0].unsqueeze(-1)


def pads(x):
    return (F.pad(x, (1, 2, 0, 1), mode="reflect"),
            F.pad(x, (2, 1, 1, 0), mode="replicate"),
            F.pad(x, (1, 1, 2, 2), value=0.5),
            F.pad(x, (-1, 1, 0, -1)))


def grids(x):
    theta = torch.tensor([[[0.8, -0.2, 0.1], [0.3, 0.9, -0.1]]])
    g = F.affine_grid(theta, [1, 3, 7, 9], align_corners=False)
    g = g.expand(x.shape[0], -1, -1, -1)
    return (F.grid_sample(x, g, align_corners=False),
            F.grid_sample(x, g, mode="nearest", padding_mode="border",
                          align_corners=True))


def attention(q, k, v, mask):
    s = q @ k.transpose(-2, -1) / 8 ** 0.5
    s = s.masked_fill(mask[:, None, None, :] == 0, -1e4)
    return torch.bmm(s.softmax(-1).flatten(0, 1), v.flatten(0, 1))


def one_hot(i):
    return F.one_hot(i, 7).float().cumsum(-1), (i.float() / 3).long()


class Tril(nn.Module):
    def forward(self, x):
        return x.tril(-1) + x.triu(2) * 2


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2)

    def forward(self, x, pad):
        return self.enc(x, src_key_padding_mask=pad)


class RnnState(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 12)
        self.gru = nn.GRUCell(8, 6)
        self.cell = nn.LSTMCell(8, 5)

    def forward(self, x, h, c):
        y, (h2, c2) = self.lstm(x, (h, c))
        g = self.gru(x[0])
        a, b = self.cell(x[1])
        return y, h2, c2, g, a, b


class TinyGpt(nn.Module):
    """Token and position embeddings, causal self-attention from a
    mask buffer cut to the length, a GELU MLP, tied output weights."""
    def __init__(self, vocab=50, d=32, heads=4, ctx=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(),
                                 nn.Linear(4 * d, d))
        self.heads = heads
        self.register_buffer("mask", torch.tril(torch.ones(ctx, ctx)))

    def forward(self, ids):
        b, t = ids.shape
        pos = torch.arange(t, dtype=torch.long).unsqueeze(0)
        x = self.tok(ids) + self.pos(pos)
        q, k, v = self.qkv(self.ln1(x)).split(x.shape[-1], dim=2)
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2)
                   for z in (q, k, v))
        a = (q @ k.transpose(-2, -1)) * (1.0 / (q.shape[-1] ** 0.5))
        a = a.masked_fill(self.mask[:t, :t] == 0, float("-inf"))
        y = (a.softmax(-1) @ v).transpose(1, 2).reshape(b, t, -1)
        x = x + self.proj(y)
        x = x + self.mlp(self.ln2(x))
        return x @ self.tok.weight.t()


class QuantNet(nn.Module):
    def __init__(self):
        super().__init__()
        import torch.ao.quantization as tq
        self.q, self.dq = tq.QuantStub(), tq.DeQuantStub()
        self.c1 = nn.Conv2d(3, 8, 3)
        self.c2 = nn.Conv2d(8, 8, 3, groups=2)
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        x = self.c2(F.relu(self.c1(self.q(x))))
        return self.dq(self.fc(x.flatten(1)))


def quantized():
    """A conv net quantized by PyTorch (static, qnnpack), which exports
    as QuantizeLinear/DequantizeLinear around float operators."""
    import torch.ao.quantization as tq
    torch.backends.quantized.engine = "qnnpack"
    m = QuantNet().eval()
    m.qconfig = tq.get_default_qconfig("qnnpack")
    tq.prepare(m, inplace=True)
    for _ in range(4):
        m(torch.randn(1, 3, 8, 8))
    return tq.convert(m)


def einsums(a, b):
    return (torch.einsum("...ij,...jk->...ik", a, b),
            torch.einsum("bii->bi", a[..., :4]),
            torch.einsum("bij->bji", a), torch.einsum("bij,bij->b", a, a))


def int_ops(x):
    i = x.argmax(-1)
    return (i * 3 + 1) // 2, i % 3, \
        torch.div(i - 5, 2, rounding_mode="trunc"), (i > 2) & (i < 6), \
        i.to(torch.float32) / 7


def softmaxes(x):
    return x.softmax(1), x.log_softmax(1), F.softmax(x, 2).sum(3)


class Seq2Seq(nn.Module):
    """nn.Transformer with its square causal mask for the target."""
    def __init__(self):
        super().__init__()
        self.t = nn.Transformer(16, 2, 1, 1, 32, batch_first=True)

    def forward(self, src, tgt):
        n = tgt.shape[1]
        mask = self.t.generate_square_subsequent_mask(n)
        return self.t(src, tgt, tgt_mask=mask)


def misc_fns(a, b):
    return (torch.cdist(a, b), F.cosine_similarity(a[:, :3], b, dim=-1),
            F.pairwise_distance(a[0], a[1]), torch.outer(a[0, 0], b[0, 1]),
            torch.clamp_min(a, 0.1).log2())


CASES.update({
    "seq2seq": (Seq2Seq, lambda: (torch.randn(1, 6, 16),
                                  torch.randn(1, 5, 16))),
    "misc_fns": (lambda: Lambda(misc_fns),
                 lambda: (torch.randn(2, 5, 4), torch.randn(2, 3, 4))),
    "weight_norm": (lambda: Seq(nn.utils.weight_norm(nn.Conv2d(3, 4, 3)),
                                nn.utils.weight_norm(nn.Linear(6, 5))),
                    lambda: image(h=8)),
    "embedding_bag": (lambda: nn.EmbeddingBag(10, 4, mode="mean"),
                      lambda: (torch.tensor([[1, 2, 4], [4, 3, 9]]),)),
    "einsum_forms": (lambda: Lambda(einsums, 4),
                     lambda: (torch.randn(2, 4, 4), torch.randn(2, 4, 3))),
    "int_ops": (lambda: Lambda(int_ops, 9), lambda: (torch.randn(1, 4, 9),)),
    "softmax_axes": (lambda: Lambda(softmaxes, 5),
                     lambda: (torch.randn(1, 3, 4, 5),)),
    "float64": (lambda: Seq(nn.Linear(6, 8), nn.Tanh(), nn.LayerNorm(8),
                            nn.Linear(8, 3)).double(),
                lambda: (torch.randn(1, 6, dtype=torch.float64),)),
    "pools_more": (lambda: Seq(nn.Conv2d(3, 4, 3),
                               nn.MaxPool2d(3, 1, padding=1, dilation=2),
                               nn.LPPool2d(2, 2), nn.AvgPool2d(3, 1, 1)),
                   lambda: image(h=14)),
    "interp_more": (lambda: Seq(nn.Conv2d(3, 4, 1),
                                nn.Upsample(scale_factor=1.5),
                                nn.Upsample(size=(7, 11), mode="bilinear"),
                                nn.Upsample(scale_factor=(0.5, 2),
                                            mode="nearest")),
                    lambda: image(h=9)),
    "convtranspose_more": (lambda: Seq(nn.ConvTranspose2d(
                               3, 4, 3, stride=(2, 1), padding=(0, 1),
                               dilation=2),
                               nn.ConvTranspose2d(4, 2, (1, 3), stride=3)),
                           lambda: image(h=7)),
    "conv_transpose3d": (lambda: Seq(nn.ConvTranspose3d(2, 3, 3, stride=2,
                                                        padding=1,
                                                        output_padding=1)),
                         lambda: (torch.randn(1, 2, 3, 4, 5),)),
    "tiny_gpt": (TinyGpt, lambda: (torch.tensor([[3, 1, 4, 1, 5, 9, 2]]),)),
    "quantized": (quantized, lambda: image(h=8)),
    "gathers": (lambda: Lambda(gathers, 5),
                lambda: (torch.randn(1, 4, 5),)),
    "reductions": (lambda: Lambda(reductions, 6),
                   lambda: (torch.randn(2, 4, 6),)),
    "math_ops": (lambda: Lambda(math_ops, 6),
                 lambda: (torch.randn(1, 4, 6),)),
    "shapes": (lambda: Lambda(shapes, 6), lambda: (torch.randn(1, 4, 6),)),
    "scatters": (lambda: Lambda(scatters, 6), lambda: (torch.randn(1, 6),)),
    "sort": (lambda: Lambda(sort_ops, 6), lambda: (torch.randn(1, 6),)),
    "nonzero": (lambda: Lambda(lambda x: torch.nonzero(x > 0), 6),
                lambda: (torch.randn(1, 6),)),
    "squeeze": (lambda: Lambda(squeezes), lambda: (torch.randn(1, 5, 1),)),
    "lrn": (lambda: Seq(nn.Conv2d(3, 6, 3),
                        nn.LocalResponseNorm(3, alpha=0.5, k=2.0)),
            lambda: image(h=8)),
    "pads": (lambda: Lambda(pads), lambda: image(h=6)),
    "grid_sample": (lambda: Lambda(grids), lambda: image(h=8)),
    "attention_mask": (lambda: Lambda(attention, 8),
                       lambda: (torch.randn(1, 2, 5, 8),
                                torch.randn(1, 2, 5, 8),
                                torch.randn(1, 2, 5, 8),
                                torch.tensor([[1, 1, 1, 0, 0]]))),
    "one_hot": (lambda: Lambda(one_hot),
                lambda: (torch.tensor([[3, 0, 6, 2]]),)),
    "tril_triu": (Tril, lambda: (torch.randn(1, 5, 6),)),
    "encoder_padmask": (Encoder, lambda: (
        torch.randn(1, 5, 16), torch.tensor([[False] * 3 + [True] * 2]))),
    "rnn_state": (RnnState, lambda: (torch.randn(3, 1, 8),
                                     torch.randn(1, 1, 12),
                                     torch.randn(1, 1, 12))),
    "bn_linear": (lambda: Seq(nn.Linear(8, 8), nn.BatchNorm1d(8),
                              nn.Dropout(), nn.ReLU()),
                  lambda: (torch.randn(1, 8),)),
    "conv_dil": (lambda: Seq(nn.Conv2d(3, 6, 3, padding=2, dilation=2),
                             nn.Conv2d(6, 6, 4, padding=(1, 2), groups=6),
                             nn.BatchNorm2d(6), nn.Hardtanh(),
                             nn.LocalResponseNorm(3),
                             nn.Upsample(scale_factor=2),
                             nn.Unfold(3, stride=2)),
                 lambda: image(h=12)),
    "upsample3d": (lambda: Seq(nn.Conv3d(2, 2, 1),
                               nn.Upsample(scale_factor=2,
                                           mode="trilinear")),
                   lambda: (torch.randn(1, 2, 3, 4, 5),)),
    "more_acts": (lambda: Seq(nn.Linear(8, 8), nn.GLU(), nn.LogSigmoid(),
                              nn.Softsign(), nn.Tanhshrink(), nn.CELU(0.5),
                              nn.Hardshrink(0.1), nn.Softshrink(0.1),
                              nn.Softmin(-1),
                              nn.RReLU()),
                  lambda: (torch.randn(1, 3, 8) * 2,)),
})

if torchvision is not None:
    CASES.update({
        "resnet50": (vision("resnet50"), image),
        "densenet121": (vision("densenet121"), image),
        "googlenet": (vision("googlenet", aux_logits=False,
                             init_weights=True), image),
        "inception_v3": (vision("inception_v3", aux_logits=False,
                                init_weights=True),
                         lambda: image(h=299)),
        "shufflenet_v2_x1_0": (vision("shufflenet_v2_x1_0"), image),
        "mnasnet0_5": (vision("mnasnet0_5"), image),
        "mobilenet_v3_small": (vision("mobilenet_v3_small"), image),
        "efficientnet_b0": (vision("efficientnet_b0"), image),
        "regnet_y_400mf": (vision("regnet_y_400mf"), image),
        # PyTorch exports adaptive pools only to a divisor of their input.
        "vgg11": (vision("vgg11"), lambda: image(h=224)),
        "alexnet": (vision("alexnet"), lambda: image(h=224)),
        "convnext_tiny": (vision("convnext_tiny"), image),
        "vit_small": (vit, image),
        "r3d_18": (lambda: redraw_zeros(torchvision.models.video.r3d_18(
            weights=None)), lambda: (torch.randn(1, 3, 4, 32, 32),)),
        "vit_b_16": (vision("vit_b_16"), lambda: image(h=224)),
        "resnet50_224": (vision("resnet50"), lambda: image(h=224)),
        "efficientnet_b0_224": (vision("efficientnet_b0"),
                                lambda: image(h=224)),
        "convnext_tiny_224": (vision("convnext_tiny"), lambda: image(h=224)),
        "mobilenet_v3_large_224": (vision("mobilenet_v3_large"),
                                   lambda: image(h=224)),
        "swin_t": (vision("swin_t"), lambda: image(h=224)),
        "fcn_resnet50": (segm("fcn_resnet50", aux_loss=False), image),
        "deeplabv3_mobilenet_v3_large": (
            segm("deeplabv3_mobilenet_v3_large", aux_loss=False), image),
        "lraspp_mobilenet_v3_large": (segm("lraspp_mobilenet_v3_large"),
                                      image),
    })

TORCH_MODELS = ["resnet50", "densenet121", "googlenet", "inception_v3",
                "shufflenet_v2_x1_0", "mnasnet0_5", "mobilenet_v3_small",
                "efficientnet_b0", "regnet_y_400mf", "vgg11", "alexnet",
                "convnext_tiny", "vit_small", "r3d_18", "vit_b_16",
                "resnet50_224",
                "efficientnet_b0_224", "convnext_tiny_224",
                "mobilenet_v3_large_224", "swin_t", "fcn_resnet50",
                "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"]


def calibrate(model, xs):
    """Batch norms with the statistics of a random batch of two, as in
    training: with the defaults (mean 0, variance 1), random weights let
    a deep net's activations shrink until its output is the last bias
    and says nothing of what came before."""
    bns = [m for m in model.modules()
           if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns or xs[0].shape[0] != BATCH or \
            not xs[0].is_floating_point():
        return
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    with torch.no_grad():
        model(torch.randn(2, *xs[0].shape[1:]), *xs[1:])
    model.eval()


# What `make check` runs (tests/onnx/torch_models.sh): (case, opset,
# symbolic dimensions), a minute at most on two cores.  Besides a
# sample of the modules, the forms that found the importer's faults: an
# If on a symbolic batch (squeeze, LocalResponseNorm), a mask whose rank
# is below the scores' (tiny_gpt), ConstantFill at opset 8 (lstm).
QUICK = [("interp_nearest", 11, None), ("interp_bilinear_ac", 13, None),
         ("groupnorm", 13, None), ("layernorm", 17, None),
         ("instancenorm", 11, None), ("pixelshuffle", 13, None),
         ("convtranspose", 13, None), ("conv1d", 13, None),
         ("maxpool_ceil", 13, None), ("adaptive_pool", 11, None),
         ("lstm", 8, None), ("gru", 14, "batch"), ("mha", 13, "batch"),
         ("cumsum", 13, None), ("topk", 11, None), ("einsum", 13, None),
         ("chunk_split", 13, "all"), ("matmul_bcast", 13, None),
         ("activations", 17, None), ("embedding", 13, "all"),
         ("squeeze", 13, "batch"), ("lrn", 11, None),
         ("tiny_gpt", 14, "all"), ("quantized", 13, None),
         ("mobilenet_v3_small", 13, "batch")]

# Cases whose export before an opset is not what PyTorch computes (its
# own warning says so): bilinear interpolation becomes Upsample, whose
# coordinates are not align_corners=False's until Resize of opset 11,
# and a downscale an Upsample with a scale below 1, which ONNX forbids.
EXPORT_DIFFERS = {"interp_bilinear": 11, "upsample3d": 11,
                  "interp_more": 11, "fcn_resnet50": 11,
                  "deeplabv3_mobilenet_v3_large": 11,
                  "lraspp_mobilenet_v3_large": 11}

# Options of torch.onnx.export beyond the defaults (--no-folding,
# --initializers-as-inputs).
EXPORT_OPTIONS = {}
# The batch of the inputs whose batch is 1 (--batch).
BATCH = 1


def widen(x):
    """Input "x" with the batch of --batch where its batch is 1: more
    random rows, or for integers the same row again."""
    if BATCH == 1 or x.dim() == 0 or x.shape[0] != 1:
        return x
    if x.is_floating_point():
        return torch.cat([x, torch.randn(BATCH - 1, *x.shape[1:],
                                         dtype=x.dtype)])
    return x.repeat(BATCH, *[1] * (x.dim() - 1))


def export(name, opset, dynamic, work):
    """The module's inputs, its outputs by PyTorch (a list of arrays),
    their names, the path of its ONNX file and the --shape arguments; or
    None and the exporter's message."""
    make, make_inputs = CASES[name]
    torch.manual_seed(0)
    model = make().eval()
    torch.manual_seed(1)
    xs = tuple(widen(x) for x in make_inputs())
    calibrate(model, xs)
    # Not under no_grad: PyTorch's fast paths there (attention, a padding
    # mask as a nested tensor) compute what the exported graph does not.
    try:
        ys = model(*xs)
    except Exception as e:  # a case that does not take these inputs
        return None, "torch: %s" % str(e).splitlines()[0][:200]
    ys = list(ys) if isinstance(ys, (tuple, list)) else [ys]
    ins = ["x%d" % i for i in range(len(xs))]
    outs = ["y%d" % i for i in range(len(ys))]
    # "batch": a symbolic first dimension, named "batch" where it is the
    # batch (--shape batch=N fixes it), else after the input (--shape
    # NAME=DIMS).  "all": every dimension symbolic, each input's shape
    # given whole.
    axes, shapes = None, []
    if dynamic == "batch":
        axes = {}
        for k, x in zip(ins, xs):
            axes[k] = {0: "batch" if x.shape[0] == BATCH else k + "_0"}
            if x.shape[0] != BATCH:
                shapes.append("%s=%s" % (k, "x".join(map(str, x.shape))))
        if any(x.shape[0] == BATCH for x in xs):
            shapes.append("batch=%d" % BATCH)
    elif dynamic == "all":
        axes = {k: {d: "%s_%d" % (k, d) for d in range(x.dim())}
                for k, x in zip(ins, xs)}
        shapes = ["%s=%s" % (k, "x".join(map(str, x.shape)))
                  for k, x in zip(ins, xs) if x.dim()]
    if axes is not None:
        axes.update({k: {d: "%s_%d" % (k, d) for d in range(y.dim())}
                     for k, y in zip(outs, ys)})
    path = os.path.join(work, "%s.op%d.onnx" % (name, opset))
    try:
        torch.onnx.export(model, xs, path, opset_version=opset,
                          input_names=ins, output_names=outs,
                          dynamic_axes=axes, **EXPORT_OPTIONS)
    except Exception as e:  # the exporter's refusal: not Tessel's
        return None, "export: %s" % str(e).splitlines()[0][:200]
    ys = [y.detach().numpy() for y in ys]
    return (xs, ys, ins, outs, path, shapes), None


def compare(got, want):
    """(ok, max abs error, max rel error) of one output."""
    if got.shape != want.shape:
        return False, float("inf"), float("inf")
    if want.dtype.kind in "iub":
        bad = int(np.sum(got != want))
        return bad == 0, float(bad), float(bad)
    g, w = got.astype(np.float64), want.astype(np.float64)
    fin = np.isfinite(w)
    if not np.array_equal(fin, np.isfinite(g)) or \
            not np.array_equal(g[~fin], w[~fin]):
        return False, float("inf"), float("inf")
    if not fin.any():
        return True, 0.0, 0.0
    err = np.abs(g[fin] - w[fin])
    # Random weights can leave a deep net's outputs tiny: the tolerance
    # follows their magnitude, not a fixed floor.
    scale = max(float(np.max(np.abs(w[fin]))), 1e-30)
    ok = bool(np.all(err <= 1e-3 * np.abs(w[fin]) + 1e-4 * scale))
    return ok, float(err.max()), float(err.max() / scale)


def run_case(tessel, name, opset, dynamic, work, verbose):
    """One row: (imported, matched, abs err, rel err, seconds, note)."""
    t0 = time.time()
    case, why = export(name, opset, dynamic, work)
    if case is None:
        return "-", "-", None, None, time.time() - t0, why
    xs, want, ins, outs, path, shapes = case
    d = tempfile.mkdtemp(dir=work)
    for k, x in zip(ins, xs):
        np.save(os.path.join(d, k + ".npy"), x.numpy())
    cmd = [tessel, "run", path, "--inputs", d, "--out",
           os.path.join(d, "out"), "--min-time", "0", "--threads", "1"]
    for sh in shapes:
        cmd += ["--shape", sh]
    t1 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    secs = time.time() - t1
    if verbose:
        print(" ".join(cmd), file=sys.stderr)
    if r.returncode != 0:
        msg = (r.stderr.strip() or r.stdout.strip()).splitlines()
        msg = msg[-1] if msg else "exit %d" % r.returncode
        imported = "no" if r.returncode == 2 else "yes"
        return imported, "no", None, None, secs, msg[:300]
    ok, ea, er, bad = True, 0.0, 0.0, []
    for k, w in zip(outs, want):
        try:
            got = np.load(os.path.join(d, "out", k + ".npy"))
        except OSError:
            return "yes", "no", None, None, secs, "no output " + k
        o, a, e = compare(got, w)
        ok, ea, er = ok and o, max(ea, a), max(er, e)
        if not o:
            bad.append(k)
    if not verbose:
        shutil.rmtree(d, ignore_errors=True)
    note = "differs: " + ", ".join(bad) if bad else ""
    return "yes", "yes" if ok else "NO", ea, er, secs, note


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("TS_BUILDDIR", "."))
    ap.add_argument("--cases", default="quick")
    ap.add_argument("--opsets", default="13")
    ap.add_argument("--dynamic", choices=["batch", "all"])
    ap.add_argument("--no-folding", action="store_true",
                    help="export with do_constant_folding=False")
    ap.add_argument("--initializers-as-inputs", action="store_true",
                    help="export with keep_initializers_as_inputs=True")
    ap.add_argument("--batch", type=int, default=1,
                    help="the batch of the inputs (where it is 1)")
    ap.add_argument("--work", default=None)
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    global BATCH
    BATCH = a.batch
    if a.no_folding:
        EXPORT_OPTIONS["do_constant_folding"] = False
    if a.initializers_as_inputs:
        EXPORT_OPTIONS["keep_initializers_as_inputs"] = True
    tessel = os.path.join(a.build, "tools", "tessel")
    names = []
    if a.cases == "quick":
        runs = [r for r in QUICK if r[0] in CASES]
    elif a.cases == "all":
        names = list(CASES)
    elif a.cases == "models":
        names = [k for k in TORCH_MODELS if k in CASES]
    elif a.cases == "modules":
        names = [k for k in CASES if k not in TORCH_MODELS]
    else:
        names = a.cases.split(",")
    for n in names:
        if n not in CASES:
            sys.exit("unknown case %s (torchvision missing?)" % n)
    if names:
        runs = [(n, int(o), a.dynamic) for n in names
                for o in a.opsets.split(",")]
    work = a.work or tempfile.mkdtemp(prefix="tessel-torch-")
    os.makedirs(work, exist_ok=True)
    torch.set_num_threads(1)
    fails = 0
    print("| case | opset | symbolic | imported | matched | max abs err | "
          "max rel err | s | note |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, opset, dynamic in runs:
        imp, ok, ea, er, secs, note = run_case(tessel, name, opset, dynamic,
                                               work, a.verbose)
        if ok != "yes" and opset < EXPORT_DIFFERS.get(name, 0):
            note = "the export differs from PyTorch before opset %d " \
                "(%s)" % (EXPORT_DIFFERS[name], note)
        elif ok != "yes" and not note.startswith(("export:", "torch:")):
            fails += 1
        print("| %s | %d | %s | %s | %s | %s | %s | %.1f | %s |" % (
            name, opset, dynamic or "-", imp, ok,
            "-" if ea is None else "%.1e" % ea,
            "-" if er is None else "%.1e" % er, secs,
            note.replace("|", "/")))
        sys.stdout.flush()
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
