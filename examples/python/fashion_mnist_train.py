"""Trains an MLP on Fashion-MNIST with a torch.utils.data.DataLoader: an ordinary PyTorch script
that `dyno tune --command` can tune (README, "Tune any training program"). The knobs are Python's:
batch size, DataLoader workers / persistent workers / prefetch factor / pinned memory, batched
fetching (a dataset __getitems__ instead of one call per sample), autocast,
torch.compile, intra-op threads, cuDNN autotuning, and the learning rate (at batch 64, scaled with
the batch: lr_scaling). It runs on its own with the defaults below; under dyno each trial's values
come from dyno_report.

    python3 examples/python/fashion_mnist_train.py --epochs 2
"""

import argparse
import gzip
import os
import sys
import time

import torch
import torch._dynamo  # noqa: F401  torch.optim imports it when the first optimizer is made (most of a
# second on a CPU): imported here with the others, it stays out of the training's clock, which starts
# at dyno_report.start() and is meant to time what the knobs change
from torch import nn
from torch.utils.data import DataLoader, Dataset

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import dyno_report  # noqa: E402

DATA = os.environ.get("DYNO_FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")
MEAN, STD = 0.2860, 0.3530
REFERENCE_BATCH = 64  # the batch `lr` is given for; the default batch


def read_idx(path):
    """An IDX file (gzip): uint8 images N x 28 x 28 or labels N."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return torch.frombuffer(bytearray(data[4 + 4 * dims:]), dtype=torch.uint8).reshape(shape)


class FashionMNIST(Dataset):
    """Map-style dataset, one normalised image and label per index, as most scripts write it."""

    def __init__(self, split, size=None):
        prefix = "train" if split == "train" else "t10k"
        self.images = read_idx(f"{DATA}/{prefix}-images-idx3-ubyte.gz")
        self.labels = read_idx(f"{DATA}/{prefix}-labels-idx1-ubyte.gz").long()
        if size:
            self.images, self.labels = self.images[:size], self.labels[:size]

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        image = (self.images[i].float() / 255 - MEAN) / STD
        return image.flatten(), self.labels[i]


class BatchedFashionMNIST(FashionMNIST):
    """The same samples fetched a batch at a time: the DataLoader calls __getitems__ with the
    batch's indices (PyTorch >= 2.1), one tensor gather instead of a Python call per sample."""

    def __getitems__(self, indices):
        index = torch.tensor(indices)
        images = (self.images[index].float() / 255 - MEAN) / STD
        return images.flatten(1), self.labels[index]


def already_collated(batch):
    return batch


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--train-size", type=int, default=0, help="first N training images (0 = all 60000)")
    parser.add_argument("--eval-every", type=int, default=10000, help="evaluate on the test set every this many training samples")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()

    knobs, report = dyno_report.start(batch_size=REFERENCE_BATCH, num_workers=0, persistent_workers=False, prefetch_factor=2,
                                      pin_memory=False, amp="off", compile=False, threads=0, cudnn_benchmark=False, lr=1e-3,
                                      lr_scaling="sqrt", batched_fetch=False)
    torch.manual_seed(dyno_report.seed())
    if knobs["threads"] > 0:
        torch.set_num_threads(knobs["threads"])
    torch.backends.cudnn.benchmark = knobs["cudnn_benchmark"]
    device = torch.device(args.device)

    batched = knobs["batched_fetch"]
    train = (BatchedFashionMNIST if batched else FashionMNIST)("train", args.train_size or None)
    workers = knobs["num_workers"]
    persistent, prefetch = knobs["persistent_workers"], knobs["prefetch_factor"]
    # Without workers there is nothing to keep or prefetch: persistent workers are said not applied,
    # so dyno does not count such a point as a configuration of its own.
    report.knobs({"persistent_workers": persistent and workers > 0})
    loader = DataLoader(train, batch_size=knobs["batch_size"], shuffle=True, drop_last=True, num_workers=workers,
                        persistent_workers=persistent and workers > 0, prefetch_factor=prefetch if workers > 0 else None,
                        pin_memory=knobs["pin_memory"], collate_fn=already_collated if batched else None)
    test = FashionMNIST("test")
    test_images = ((test.images.float() / 255 - MEAN) / STD).flatten(1).to(device)
    test_labels = test.labels.to(device)

    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10)).to(device)
    # A larger batch takes a larger learning rate (fewer, less noisy steps an epoch): the square root
    # of the batch's ratio to the reference suits Adam, the ratio itself SGD.
    ratio = knobs["batch_size"] / REFERENCE_BATCH
    scales = {"none": 1.0, "linear": ratio, "sqrt": ratio ** 0.5}
    if knobs["lr_scaling"] not in scales:
        print(f"lr_scaling: '{knobs['lr_scaling']}' is not one of none, linear, sqrt", file=sys.stderr)
        sys.exit(2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=knobs["lr"] * scales[knobs["lr_scaling"]])
    step = torch.compile(model) if knobs["compile"] else model
    amp = knobs["amp"]
    autocast = dict(device_type=device.type, dtype=torch.bfloat16 if amp == "bf16" else torch.float16, enabled=amp != "off")
    scaler = torch.amp.GradScaler(device.type, enabled=amp == "fp16")

    def evaluate():
        model.eval()
        with torch.no_grad(), torch.autocast(**autocast):
            correct = sum((step(test_images[i:i + 2000]).argmax(1) == test_labels[i:i + 2000]).sum().item()
                          for i in range(0, len(test_labels), 2000))
        model.train()
        return correct / len(test_labels)

    seen, next_eval, started = 0, args.eval_every, time.time()
    for epoch in range(args.epochs):
        for images, labels in loader:
            images = images.to(device, non_blocking=knobs["pin_memory"])
            labels = labels.to(device, non_blocking=knobs["pin_memory"])
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(**autocast):
                loss = nn.functional.cross_entropy(step(images), labels)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            report.step(len(labels), loss)
            seen += len(labels)
            if seen >= next_eval:
                next_eval += args.eval_every
                accuracy = evaluate()
                report.eval("accuracy", accuracy)
                print(f"epoch {epoch} samples {seen}: accuracy {accuracy:.4f} ({time.time() - started:.1f} s)", flush=True)
    report.done()


if __name__ == "__main__":
    main()
