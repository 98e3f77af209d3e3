#include "dyno/reports/python_settings.h"

#include <sstream>

namespace dyno {
namespace {

// train_step's loss, as the engine computes it: each micro-batch's mean, over the step's micro-batches.
std::string loss_line(const std::string& loss) {
  if (loss == "mse")
    return "            output = model(inputs)\n"
           "            loss = torch.nn.functional.mse_loss(output.float(), targets.float().reshape(output.shape)) / len(batches)\n";
  if (loss == "own")
    return "            loss = your_loss(model(inputs), targets) / len(batches)  # the workload's own loss, defined in C++: yours here (run_path's init_globals)\n";
  return "            output = model(inputs)  # cross-entropy over the last dimension (a sequence model's [B, T, V] too)\n"
         "            loss = torch.nn.functional.cross_entropy(output.flatten(0, -2).float(), targets.flatten(),\n"
         "                                                     label_smoothing=label_smoothing) / len(batches)\n";
}

}  // namespace

std::string best_config_python(const RunConfig& c, const PythonRecipe& recipe) {
  std::ostringstream py;
  auto boolean = [](bool b) { return b ? "True" : "False"; };
  py << "# dyno tuned settings for workload '" << c.workload << "' on " << c.device << ", as PyTorch Python.\n"
     << "# Put these into your training script; each block says which knob it comes from.\n"
     << "import torch\n\n";
  py << "# threads\n";
  if (c.threads > 0) py << "torch.set_num_threads(" << c.threads << ")\n";
  else py << "# threads=0: keep PyTorch's default intra-op thread count\n";
  py << "\n# host_allocator\n";
  if (c.host_allocator == "hugepages")
    py << "# glibc: large blocks from the heap (no mmap/munmap per step), freed memory kept for reuse, heaps in\n"
       << "# transparent huge pages; glibc reads these only at start (glibc >= 2.35 for hugetlb), so start Python with\n"
       << "#   GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=2147483647 python train.py\n";
  else if (c.host_allocator == "retain")
    py << "import ctypes  # glibc: large blocks from the heap (no mmap/munmap per step), freed memory kept for reuse\n"
       << "libc = ctypes.CDLL('libc.so.6')\n"
       << "libc.mallopt(-4, 0)  # M_MMAP_MAX\n"
       << "libc.mallopt(-1, 2**31 - 1)  # M_TRIM_THRESHOLD\n"
       << "# or start Python with GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=2147483647\n";
  else if (c.host_allocator == "tcmalloc")
    py << "# tcmalloc replaces malloc for the whole process: start Python with\n"
       << "#   LD_PRELOAD=libtcmalloc_minimal.so.4 python train.py   (Debian package libtcmalloc-minimal4)\n";
  else py << "# (the C library's malloc defaults)\n";
  py << "\n# flush_denormal\n"
     << "torch.set_flush_denormal(" << boolean(c.flush_denormal) << ")\n";
  py << "\n# cudnn_benchmark, tf32, deterministic\n"
     << "torch.backends.cudnn.benchmark = " << boolean(c.cudnn_benchmark) << "\n"
     << "torch.backends.cuda.matmul.allow_tf32 = " << boolean(c.tf32) << "\n"
     << "torch.backends.cudnn.allow_tf32 = True  # PyTorch's default, as dyno's fp32: tf32 is the extra matmul TF32\n"
     << "torch.use_deterministic_algorithms(" << boolean(c.deterministic) << ")\n\n";
  py << "# batch_size, num_workers, prefetch, pin_memory\n"
     << "loader_kwargs = dict(batch_size=" << c.batch_size << ", shuffle=True, drop_last=True, num_workers=" << c.num_workers;
  if (c.num_workers > 0) py << ", prefetch_factor=" << c.prefetch << ", persistent_workers=True";
  py << ", pin_memory=" << boolean(c.pin_memory) << ")\n"
     << "# train_loader = torch.utils.data.DataLoader(train_dataset, **loader_kwargs)\n\n";
  // A resolved config names its optimizer and its learning rate (the recipe's, scaled to this batch
  // by lr_scaling); an unresolved one ("auto", 0) leaves them to the workload's recipe.
  const bool resolved = c.optimizer != "auto" && c.lr > 0;
  py << "# optimizer, lr, schedule\n";
  if (resolved) {
    std::ostringstream lr;
    lr.precision(6);
    lr << c.lr;
    const int64_t ranks = c.ddp.world_size;
    py << "optimizer_class = torch.optim." << (c.optimizer == "sgd" ? "SGD" : "AdamW") << "\n"
       << "lr = " << lr.str() << "  # lr_scaling=" << c.lr_scaling << " already applied for the effective batch "
       << c.batch_size * c.grad_accum_steps * ranks << " (batch " << c.batch_size << " x grad_accum_steps " << c.grad_accum_steps;
    if (ranks > 1) py << " x " << ranks << " DDP ranks: each rank's optimizer takes this lr";
    py << ")\n# schedule: " << c.schedule << " over " << c.epochs << " epochs";
    if (c.schedule == "cosine") py << ", the first " << recipe.warmup_fraction * 100 << "% of steps a linear warm-up";
    py << "\n";
  } else {
    py << "# optimizer=" << c.optimizer << ", lr=" << c.lr << ", schedule=" << c.schedule << ": the workload's recipe\n";
  }
  py << "# optimizer = optimizer_class(model.parameters(), lr=lr, **optimizer_kwargs)  (optimizer_impl=" << c.optimizer_impl << ")\n"
     << "optimizer_kwargs = dict(weight_decay=" << recipe.weight_decay;
  if (c.optimizer == "sgd") py << ", momentum=" << recipe.momentum;
  py << ", " << (c.optimizer_impl == "fused" ? "fused=True" : c.optimizer_impl == "foreach" ? "foreach=True" : "foreach=False") << ")\n"
     << "grad_accum_steps = " << c.grad_accum_steps << "\n"
     << "clip_grad_norm = " << (c.clip_grad_norm > 0 ? std::to_string(c.clip_grad_norm) : "None") << "\n"
     << "label_smoothing = " << c.label_smoothing << "  # training loss only; evaluate with plain cross-entropy\n";
  py << "\n# channels_last\n";
  if (c.channels_last) py << "# model = model.to(memory_format=torch.channels_last); inputs = inputs.to(memory_format=torch.channels_last)\n";
  else py << "# (contiguous NCHW)\n";
  py << "\n# checkpointing\n";
  if (c.checkpointing)
    py << "# wrap each model segment: x = torch.utils.checkpoint.checkpoint(segment, x, use_reentrant=False)\n";
  else py << "# (no activation checkpointing)\n";
  py << "\n# amp\n";
  if (c.amp == "off") {
    py << "autocast = dict(device_type='" << c.device << "', enabled=False)\nscaler = None\n";
  } else {
    py << "autocast = dict(device_type='" << c.device << "', dtype=torch." << (c.amp == "fp16" ? "float16" : "bfloat16") << ")\n";
    if (c.amp == "fp16") py << "scaler = torch.amp.GradScaler('cuda')\n";
    else py << "scaler = None  # bf16 needs no loss scaling\n";
  }
  py << "\n\ndef train_step(model, optimizer, batches):\n"
     << "    \"\"\"One optimizer step over a list of grad_accum_steps micro-batches, with the tuned settings.\"\"\"\n"
     << "    optimizer.zero_grad(set_to_none=" << boolean(c.set_to_none) << ")  # set_to_none\n"
     << "    for inputs, targets in batches:\n"
     << "        inputs = inputs.to('" << c.device << "', non_blocking=" << boolean(c.pin_memory) << ")\n"
     << "        targets = targets.to('" << c.device << "', non_blocking=" << boolean(c.pin_memory) << ")\n"
     << "        with torch.autocast(**autocast):\n"
     << loss_line(recipe.loss)
     << "        (scaler.scale(loss) if scaler else loss).backward()\n"
     << "    if scaler:\n"
     << "        scaler.unscale_(optimizer)\n"
     << "    if clip_grad_norm:\n"
     << "        torch.nn.utils.clip_grad_norm_(model.parameters(), clip_grad_norm)\n"
     << "    if scaler:\n"
     << "        scaler.step(optimizer)\n"
     << "        scaler.update()\n"
     << "    else:\n"
     << "        optimizer.step()\n";
  return py.str();
}

}  // namespace dyno
