"""The same training step as dyno's engine, written as a PyTorch user would in Python.

Used by scripts/bench-vs-python to compare dyno's C++ loop with Python PyTorch from the same
torch install: same model, data (Fashion-MNIST read from the Debian .gz files), batch, threads,
optimizer (AdamW + per-step cosine LR), zero_grad(set_to_none=True), and the same measurement
(steady-state windows after warm-up, median samples/s).

Variants a careful user would try: --optimizer default|fused (torch.optim.AdamW's default
foreach path, or fused=True), --compile (torch.compile on the model), --precision fp32|bf16
(bf16 = torch.autocast on the device, as dyno's amp=bf16), --device cpu|cuda.

Prints one JSON object: {"samples_per_second": median, "windows": [...]}.
"""
import argparse
import gzip
import json
import math
import os
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

MEAN, STD = 0.2860, 0.3530


def read_idx(path, header):
    with gzip.open(path, "rb") as f:
        data = f.read()
    return torch.frombuffer(bytearray(data[header:]), dtype=torch.uint8)


def load_train(data_dir):
    images = read_idx(f"{data_dir}/train-images-idx3-ubyte.gz", 16).view(-1, 1, 28, 28)
    labels = read_idx(f"{data_dir}/train-labels-idx1-ubyte.gz", 8).long()
    return images, labels


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))


def cnn():
    def block(i, o):
        return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(), nn.MaxPool2d(2))

    return nn.Sequential(block(1, 32), block(32, 64), nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(),
                         nn.Dropout(0.25), nn.Linear(128, 10))


RECIPES = {"fashion-mlp": (mlp, 1e-3, 1e-4, 15), "fashion-cnn": (cnn, 2e-3, 1e-4, 12)}


def cosine(step, base_lr, total, warmup_fraction=0.02):
    warmup = max(1.0, math.floor(warmup_fraction * total))
    if step < warmup:
        return base_lr * (step + 1) / warmup
    progress = (step - warmup) / max(1.0, total - warmup)
    return base_lr * 0.5 * (1.0 + math.cos(math.pi * progress))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--workload", required=True, choices=sorted(RECIPES))
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--warmup-steps", type=int, default=20)
    p.add_argument("--window-steps", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data-dir", default=os.environ.get("DYNO_FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist"))
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                   help="cuda: model on the GPU, each batch gathered on the host and copied, as dyno's default loader")
    p.add_argument("--optimizer", choices=["default", "fused"], default="default")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (compile time falls in warm-up)")
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    a = p.parse_args()

    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    images, labels = load_train(a.data_dir)
    build, lr, weight_decay, epochs = RECIPES[a.workload]
    model = build().to(a.device)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay, fused=a.optimizer == "fused" or None)
    forward = torch.compile(model) if a.compile else model
    steps_per_epoch = images.shape[0] // a.batch_size
    total = epochs * steps_per_epoch
    order = torch.randperm(images.shape[0])
    sync = torch.cuda.synchronize if a.device == "cuda" else (lambda: None)

    windows = []
    window_start, window_items = time.perf_counter(), 0
    for step in range(a.steps):
        b = step % steps_per_epoch
        idx = order[b * a.batch_size:(b + 1) * a.batch_size]
        x = images.index_select(0, idx).float().div_(255.0).sub_(MEAN).div_(STD)
        y = labels.index_select(0, idx)
        if a.device != "cpu":
            x, y = x.to(a.device), y.to(a.device)
        for g in opt.param_groups:
            g["lr"] = cosine(step, lr, total)
        opt.zero_grad(set_to_none=True)
        with torch.autocast(a.device, dtype=torch.bfloat16, enabled=a.precision == "bf16"):
            loss = F.cross_entropy(forward(x), y)
        loss.backward()
        opt.step()
        done = step + 1
        if done <= a.warmup_steps or done % a.window_steps == 0:
            sync()
        if done <= a.warmup_steps:
            window_start, window_items = time.perf_counter(), 0
            continue
        window_items += a.batch_size
        if done % a.window_steps == 0:
            windows.append(window_items / (time.perf_counter() - window_start))
            window_start, window_items = time.perf_counter(), 0
    print(json.dumps({"samples_per_second": statistics.median(windows), "windows": windows, "final_loss": loss.item()}))


if __name__ == "__main__":
    main()
