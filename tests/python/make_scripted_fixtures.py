"""Writes the files a user brings from Python, for the TorchScript and tensor-file tests.

  data.pt        torch.save({"inputs", "targets"}): 2,400 Fashion-MNIST images (float32, normalised), int64 labels
  model.pt       torch.jit.script of an nn.Sequential of three blocks (a chain: conv, conv, head);
                 model_wide.pt the same with 12 channels instead of 8 (same names, other shapes);
                 partly_frozen.pt the same with its first convolution's weight frozen
  unused.pt      the chain model beside a Linear its forward never uses
  tree.pt        torch.jit.script of a module whose forward is not a chain of its children
  transposed.pt  two class scores per example, returned [2, N] (the batch second)
  grid_out.pt    outputs of shape [N, 2, 3]; grid_targets.pt: mse targets of shape [N, 3, 2] (as many values, another shape)
  training_only.pt  two children in a row with dropout between them in training only (not a chain either)
  grads.pt       one batch and the eager module's gradients on it, fp32 and under bf16 autocast
  mixed.pt       float64 inputs and int32 targets
  regression.pt  float targets (each image's mean) for mse, and regressor.pt, a scripted MLP with one output
  big.pt         26,214,400 float32 inputs (100 MiB), to read a large file; big_sum.pt: their sum
  frozen.pt      torch.jit.freeze of the model (inference only); no_grad.pt: parameters without requires_grad
  not_a_dict.pt  a bare tensor; no_targets.pt: a dict without "targets"; legacy.pt: the pre-1.6 format
  misfits        data that does not fit model.pt: flat.pt (inputs flattened to 784), class_ids.pt (labels
                 10-19 for its 10 outputs), float_targets.pt (the labels as float32)
  ignored.pt     data.pt with every seventh target -100 (cross-entropy's ignore_index: it fits)
  ignored_left_out.pt  ignored.pt without those examples
  custom_op.pt   a model calling an operator registered in Python only (dyno's LibTorch cannot load it)
  branchy.pt     two heads, one used per batch by its first image (ranks of a step may use different ones)
  requires_grad.pt  data.pt's tensors saved with requires_grad=True
  conv1d.pt      a 1-D convolution over each image's rows (LibTorch counts no FLOPs for its forward)

Usage: python make_scripted_fixtures.py OUT_DIR
"""
import gzip
import os
import sys

import torch
from torch import nn

FASHION = os.environ.get("DYNO_FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")


def fashion(count):
    with gzip.open(os.path.join(FASHION, "train-images-idx3-ubyte.gz")) as f:
        images = torch.frombuffer(bytearray(f.read()[16:16 + count * 784]), dtype=torch.uint8)
    with gzip.open(os.path.join(FASHION, "train-labels-idx1-ubyte.gz")) as f:
        labels = torch.frombuffer(bytearray(f.read()[8:8 + count]), dtype=torch.uint8)
    inputs = (images.view(count, 1, 28, 28).float() / 255.0 - 0.2860) / 0.3530
    return inputs, labels.long()


def chain_model(width=8):
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Sequential(nn.Conv2d(1, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(2)),
        nn.Sequential(nn.Conv2d(width, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten()),
        nn.Sequential(nn.Linear(16 * 7 * 7, 64), nn.ReLU(), nn.Linear(64, 10)),
    )


class TrainingOnly(nn.Module):
    """Children in a row, with dropout between them that only training runs: not a chain."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a = nn.Sequential(nn.Flatten(), nn.Linear(784, 32))
        self.b = nn.Linear(32, 10)

    def forward(self, x):
        x = self.a(x)
        if self.training:
            x = nn.functional.dropout(x, 0.5, True)
        return self.b(x)


class Transposed(nn.Module):
    """Two class scores per example, returned with the batch as the second dimension."""

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(784, 2)

    def forward(self, x):
        return self.l(x.flatten(1)).t()


class Tree(nn.Module):
    """Two branches added together: running the children in order is not this forward."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(784, 10)
        self.b = nn.Linear(784, 10)

    def forward(self, x):
        x = x.flatten(1)
        return self.a(x) + self.b(x)


class Branchy(nn.Module):
    """Two heads, one used per batch: `a` when the batch's first image is brighter than the mean,
    else `b`, so that the ranks of one step may use different parameters."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Flatten(), nn.Linear(784, 16), nn.ReLU())
        self.a = nn.Linear(16, 10)
        self.b = nn.Sequential(nn.Linear(16, 12), nn.ReLU(), nn.Linear(12, 10))  # of another size than `a`

    def forward(self, x):
        h = self.body(x)
        if bool(x[0].sum() > 0):
            return self.a(h)
        return self.b(h)


class CustomOp(nn.Module):
    """A linear layer whose output goes through an operator only this Python process registers."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(784, 10)

    def forward(self, x):
        return torch.ops.dyno_fixture.twice(self.lin(x.flatten(1)))


class Unused(nn.Module):
    """The chain model and a layer its forward never uses (trainable, so it gets no gradient)."""

    def __init__(self):
        super().__init__()
        self.body = chain_model()
        self.spare = nn.Linear(4, 4)

    def forward(self, x):
        return self.body(x)


def gradients(model, inputs, targets, autocast):
    model.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        output = model(inputs)
    loss = nn.functional.cross_entropy(output.float(), targets)
    loss.backward()
    return loss.detach(), [p.grad.clone() for p in model.parameters()]


def main(out):
    os.makedirs(out, exist_ok=True)
    inputs, targets = fashion(2400)
    torch.save({"inputs": inputs, "targets": targets}, os.path.join(out, "data.pt"))

    model = chain_model()
    torch.jit.script(model).save(os.path.join(out, "model.pt"))
    torch.jit.script(Tree()).save(os.path.join(out, "tree.pt"))
    torch.jit.script(chain_model(width=12)).save(os.path.join(out, "model_wide.pt"))
    partly_frozen = chain_model()
    partly_frozen[0][0].weight.requires_grad_(False)
    torch.jit.script(partly_frozen).save(os.path.join(out, "partly_frozen.pt"))
    torch.jit.script(Unused()).save(os.path.join(out, "unused.pt"))

    batch_inputs, batch_targets = inputs[:32].clone(), targets[:32].clone()
    expected = {"inputs": batch_inputs, "targets": batch_targets,
                "names": [n for n, _ in model.named_parameters()]}
    for name, autocast in (("fp32", False), ("bf16", True)):
        loss, grads = gradients(chain_model(), batch_inputs, batch_targets, autocast)
        expected[name + "_loss"] = loss
        expected[name + "_grads"] = grads
    torch.save(expected, os.path.join(out, "grads.pt"))

    torch.save({"inputs": inputs[:64].double(), "targets": targets[:64].int()}, os.path.join(out, "mixed.pt"))
    torch.manual_seed(0)
    torch.jit.script(nn.Sequential(nn.Linear(784, 32), nn.ReLU(), nn.Linear(32, 1))).save(os.path.join(out, "regressor.pt"))
    torch.save({"inputs": inputs[:600].flatten(1).clone(), "targets": inputs[:600].flatten(1).mean(1, keepdim=True)},
               os.path.join(out, "regression.pt"))
    big = torch.rand(100 * 1024 * 1024 // 4 // 64, 64, generator=torch.Generator().manual_seed(1))
    torch.save({"inputs": big, "targets": torch.zeros(big.shape[0], dtype=torch.long)}, os.path.join(out, "big.pt"))
    torch.save({"sum": big.double().sum()}, os.path.join(out, "big_sum.pt"))

    torch.jit.freeze(torch.jit.script(chain_model().eval())).save(os.path.join(out, "frozen.pt"))
    no_grad = chain_model()
    for p in no_grad.parameters():
        p.requires_grad_(False)
    torch.jit.script(no_grad).save(os.path.join(out, "no_grad.pt"))

    torch.save(inputs[:8].clone(), os.path.join(out, "not_a_dict.pt"))
    torch.save({"inputs": inputs[:8].clone(), "labels": targets[:8].clone()}, os.path.join(out, "no_targets.pt"))
    torch.save({"inputs": inputs[:64].flatten(1).clone(), "targets": targets[:64].clone()}, os.path.join(out, "flat.pt"))
    torch.save({"inputs": inputs[:64].clone(), "targets": targets[:64] + 10}, os.path.join(out, "class_ids.pt"))
    torch.save({"inputs": inputs[:64].clone(), "targets": targets[:64].float()}, os.path.join(out, "float_targets.pt"))
    torch.save({"inputs": inputs[:8].clone(), "targets": targets[:8].clone()}, os.path.join(out, "legacy.pt"), _use_new_zipfile_serialization=False)
    # Targets that cross-entropy ignores (-100, its ignore_index: padding) among the class ids.
    ignored = targets.clone()
    ignored[::7] = -100
    torch.save({"inputs": inputs.clone(), "targets": ignored}, os.path.join(out, "ignored.pt"))
    kept = ignored != -100
    torch.save({"inputs": inputs[kept].clone(), "targets": targets[kept].clone()}, os.path.join(out, "ignored_left_out.pt"))
    library = torch.library.Library("dyno_fixture", "DEF")
    library.define("twice(Tensor x) -> Tensor")
    library.impl("twice", lambda x: x * 2, "CompositeExplicitAutograd")
    torch.jit.script(CustomOp()).save(os.path.join(out, "custom_op.pt"))
    torch.jit.script(Branchy()).save(os.path.join(out, "branchy.pt"))
    torch.jit.script(TrainingOnly()).save(os.path.join(out, "training_only.pt"))
    torch.jit.script(Transposed()).save(os.path.join(out, "transposed.pt"))
    torch.jit.script(nn.Sequential(nn.Flatten(), nn.Linear(784, 6), nn.Unflatten(1, (2, 3)))).save(os.path.join(out, "grid_out.pt"))
    torch.save({"inputs": inputs[:64].clone(), "targets": torch.rand(64, 3, 2)}, os.path.join(out, "grid_targets.pt"))
    # Features computed outside no_grad: torch.save keeps requires_grad.
    torch.save({"inputs": inputs.clone().requires_grad_(), "targets": targets.clone()}, os.path.join(out, "requires_grad.pt"))
    torch.manual_seed(0)
    conv1d = nn.Sequential(nn.Flatten(1, 2), nn.Conv1d(28, 16, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(16 * 28, 10))
    torch.jit.script(conv1d).save(os.path.join(out, "conv1d.pt"))


if __name__ == "__main__":
    main(sys.argv[1])
