#include "dyno/suite/distributed/distributed_context.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <unordered_map>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/comm.hpp>
#include <torch/csrc/distributed/c10d/reducer.hpp>
#include <torch/torch.h>
#include <torch/version.h>

#include "dyno/reports/user_error.h"
#include "dyno/suite/distributed/compression_hooks.h"
#include "dyno/suite/distributed/nccl_backend.h"
#include "dyno/suite/distributed/rank_failure.h"

namespace dyno {
namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

bool loopback_address(const std::string& addr) { return addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1"; }

// The socket rank 0's store listens on, bound to MASTER_ADDR only (TCPStore on its own listens on
// every interface): a job on 127.0.0.1 cannot be reached from another machine. Returns the fd;
// throws UserError naming the address when it cannot be bound.
int listen_on(const std::string& addr, int64_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(addr.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (rc != 0) throw UserError("ddp", "MASTER_ADDR '" + addr + "' does not resolve: " + gai_strerror(rc));
  std::string error = "no address";
  for (addrinfo* a = found; a; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 2048) == 0) {
      ::freeaddrinfo(found);
      return fd;
    }
    error = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  throw UserError("ddp", "rank 0 cannot serve the store on " + addr + ":" + std::to_string(port) + " (is MASTER_PORT busy, and is MASTER_ADDR an address of this machine?): " + error);
}

int64_t env_int(const char* name, int64_t lo, int64_t hi) {
  auto v = env(name);
  if (!v) throw UserError("ddp", std::string(name) + " is not set; a distributed run needs RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT (use dyno launch or torchrun)");
  size_t used = 0;
  long long x = 0;
  try {
    x = std::stoll(*v, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != v->size() || x < lo || x > hi)
    throw UserError("ddp", std::string(name) + "='" + *v + "' is not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return x;
}

constexpr size_t kFirstBucketBytes = 1024 * 1024;  // as torch DDP's _DEFAULT_FIRST_BUCKET_BYTES

// c10d's constructors changed between LibTorch releases; these pick, at compile time, the one the
// LibTorch built against has (2.4 and later). The branch not taken is never instantiated.
template <typename Group = c10d::ProcessGroup>
c10::intrusive_ptr<Group> make_process_group(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                             typename Group::BackendType type, std::chrono::milliseconds timeout) {
  if constexpr (std::is_constructible_v<Group, c10::intrusive_ptr<c10d::Store>, int, int>) {
    auto group = c10::make_intrusive<Group>(store, rank, size);
    group->setDefaultBackend(type);
    return group;
  } else {  // the default backend is the options' (LibTorch 2.4)
    const std::string name = type == Group::BackendType::NCCL ? "nccl" : "gloo";
    return c10::make_intrusive<Group>(store, rank, size, c10::make_intrusive<typename Group::Options>(name, timeout));
  }
}

// A reducer of `parameters` in `buckets` (the initial assignment, whose size limits are `limits`)
// that rebuilds its buckets after the first backward with a first one of kFirstBucketBytes, then
// `cap` each, as torch's DistributedDataParallel builds it.
template <typename R = c10d::Reducer>
std::shared_ptr<R> make_reducer(const std::vector<at::Tensor>& parameters, const std::vector<std::vector<size_t>>& buckets,
                                const std::vector<size_t>& limits, const c10::intrusive_ptr<c10d::ProcessGroup>& group, int64_t cap,
                                bool gradient_as_bucket_view) {
  using Tensors = std::vector<at::Tensor>;
  using Buckets = std::vector<std::vector<size_t>>;
  using Group = c10::intrusive_ptr<c10d::ProcessGroup>;
  using Names = std::unordered_map<size_t, std::string>;
  const std::vector<bool> sparse(parameters.size(), false);
  const auto first = static_cast<int64_t>(kFirstBucketBytes);
  constexpr bool find_unused = false, skip_unused_all_reduce = false, python_reducer = false;
  if constexpr (std::is_constructible_v<R, Tensors, Buckets, Group, std::vector<bool>, int64_t, bool, bool, Names, int64_t, bool, bool, std::vector<int64_t>>) {
    // An empty list of per-bucket limits asks for the first and `cap` (a list is taken bucket by bucket).
    return std::make_shared<R>(parameters, buckets, group, sparse, cap, find_unused, gradient_as_bucket_view, Names{}, first, skip_unused_all_reduce,
                               python_reducer, std::vector<int64_t>{});
  } else if constexpr (std::is_constructible_v<R, Tensors, Buckets, Group, std::vector<bool>, int64_t, bool, bool, Names, int64_t, bool, bool>) {
    return std::make_shared<R>(parameters, buckets, group, sparse, cap, find_unused, gradient_as_bucket_view, Names{}, first, skip_unused_all_reduce,
                               python_reducer);
  } else {  // LibTorch 2.4
    return std::make_shared<R>(parameters, buckets, limits, group, sparse, cap, find_unused, gradient_as_bucket_view, Names{}, first);
  }
}

// Which machine this process runs on, for counting the ranks that share its cores: the host name
// and the kernel's boot id (one per booted kernel, so two machines that share a host name, as
// cloned VMs or default names do, are still two; containers on one kernel share its cores and id
// but each has its own host name, and are counted apart as before).
std::string this_machine() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::string boot_id;
  if (std::FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
    char text[64] = {};
    if (std::fgets(text, sizeof text, f)) boot_id = text;
    std::fclose(f);
  }
  while (!boot_id.empty() && (boot_id.back() == '\n' || boot_id.back() == ' ')) boot_id.pop_back();
  return std::string(host) + "/" + boot_id;
}

}  // namespace

std::optional<DistributedEnv> distributed_env_from_environment() {
  if (!env("WORLD_SIZE")) return std::nullopt;
  DistributedEnv e;
  e.world_size = env_int("WORLD_SIZE", 1, 1 << 20);
  e.rank = env_int("RANK", 0, e.world_size - 1);
  e.local_rank = env("LOCAL_RANK") ? env_int("LOCAL_RANK", 0, 1 << 20) : e.rank;
  e.local_world_size = env("LOCAL_WORLD_SIZE") ? env_int("LOCAL_WORLD_SIZE", 1, e.world_size) : e.world_size;
  if (e.world_size == 1) return e;
  auto addr = env("MASTER_ADDR");
  if (!addr) throw UserError("ddp", "MASTER_ADDR is not set (the address of rank 0's store, e.g. 127.0.0.1)");
  e.master_addr = *addr;
  e.all_on_this_machine = env("LOCAL_WORLD_SIZE") ? e.local_world_size == e.world_size : loopback_address(e.master_addr);
  if (!env("LOCAL_WORLD_SIZE") && !e.all_on_this_machine) e.local_world_size = 0;
  e.master_port = env_int("MASTER_PORT", 1, 65535);
  e.agent_store = env("TORCHELASTIC_USE_AGENT_STORE").value_or("") == "True";
  return e;
}

void run_collective(const std::function<void()>& collective) {
  try {
    collective();
  } catch (const c10::Error&) {
    throw;  // LibTorch's own (c10::DistError included: the CLI's to tell)
  } catch (const UserError&) {
    throw;
  } catch (const RankFailure&) {
    throw;
  } catch (const std::exception& e) {
    throw RankFailure(collective_failure(e.what()));
  }
}

int64_t process_rank() {
  const auto e = distributed_env_from_environment();
  return e ? e->rank : 0;
}

DistributedContext::DistributedContext(const DistributedEnv& e, const RunConfig& config, const c10::Device& device, bool gloo_without_shared_memory)
    : env_(e), config_(config), device_(device) {
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(config.ddp.timeout_s * 1000));
  const std::string where = e.master_addr + ":" + std::to_string(e.master_port);
  char within[48];
  std::snprintf(within, sizeof within, "within %g s (ddp.timeout_s)", config.ddp.timeout_s);
  c10d::TCPStoreOptions options;
  options.port = static_cast<uint16_t>(e.master_port);
  options.isServer = e.rank == 0 && !e.agent_store;
  options.numWorkers = static_cast<size_t>(e.world_size);
  options.waitWorkers = false;
  options.timeout = timeout;
  if (options.isServer) {
    options.masterListenFd = listen_on(e.master_addr, e.master_port);
    if (!loopback_address(e.master_addr))
      std::fprintf(stderr, "[ddp] rank 0 serves the store on %s (reachable from other machines on that address)\n", where.c_str());
  }
  try {
    c10::intrusive_ptr<c10d::Store> tcp = c10::make_intrusive<c10d::TCPStore>(e.master_addr, options);
    if (e.agent_store)
      store_ = c10::make_intrusive<c10d::PrefixStore>("/worker/attempt_" + env("TORCHELASTIC_RESTART_COUNT").value_or("0"), tcp);
    else
      store_ = tcp;
  } catch (const std::exception& error) {
    std::string message = error.what();
    message = message.substr(0, message.find('\n'));
    throw UserError("ddp", options.isServer ? "rank 0 cannot serve the store on " + where + " (is MASTER_PORT busy?): " + message
                                            : "cannot reach the store at " + where + " " + within +
                                                  " (is MASTER_ADDR right, and is rank 0 running?): " + message);
  }
  // Every rank counts itself on its machine (before it states its world size, which every rank then
  // waits for), and states the world size it was given; rank 0's must match all of them.
  const std::string on_host = "dyno/ranks_on/" + this_machine();
  const std::string mine = std::to_string(e.world_size);
  try {
    store_->add(on_host, 1);  // every rank, whether or not it knows LOCAL_WORLD_SIZE
    store_->set("dyno/world_size_of/" + std::to_string(e.rank), std::vector<uint8_t>(mine.begin(), mine.end()));
    for (int64_t r = 0; r < e.world_size; ++r) {
      auto value = store_->get("dyno/world_size_of/" + std::to_string(r));
      if (std::string(value.begin(), value.end()) != mine)
        throw UserError("ddp", "WORLD_SIZE differs across ranks: rank " + std::to_string(r) + " has " + std::string(value.begin(), value.end()) +
                                   ", rank " + std::to_string(e.rank) + " has " + mine);
    }
    if (store_->add("dyno/joined", 1) > e.world_size)
      throw UserError("ddp", "more processes joined than WORLD_SIZE=" + mine + "; check the launcher's rank count");
    if (env_.local_world_size == 0) env_.local_world_size = store_->add(on_host, 0);
  } catch (const c10::DistNetworkError& error) {  // the store's connection lost: its server ended
    throw RankFailure("lost the store at " + where + " while the ranks joined (" + (e.agent_store ? "the launcher's agent" : "rank 0") +
                      ", which serves it, ended): " + error.what_without_backtrace());
  } catch (const c10::Error& error) {
    throw UserError("ddp", "not all " + mine + " ranks joined " + within + " (WORLD_SIZE larger than the ranks started, or a rank died): " +
                               error.what_without_backtrace());
  }

  const bool nccl = config.ddp.backend == "nccl";
  group_ = make_process_group(store_, static_cast<int>(e.rank), static_cast<int>(e.world_size),
                              nccl ? c10d::ProcessGroup::BackendType::NCCL : c10d::ProcessGroup::BackendType::GLOO, timeout);
  if (nccl) {
    auto backend = make_nccl_backend(store_, static_cast<int>(e.rank), static_cast<int>(e.world_size), timeout);
    group_->setBackend(c10::DeviceType::CUDA, c10d::ProcessGroup::BackendType::NCCL, backend);
  } else {
    auto gloo_options = c10d::ProcessGroupGloo::Options::create(timeout);
    // Loopback jobs bind Gloo to loopback; others to GLOO_SOCKET_IFNAME's interface when it is set
    // (as torch does: the address a host's name resolves to may be none the other machines reach),
    // else to this host's address (torch's default device).
    const std::string interfaces = env("GLOO_SOCKET_IFNAME").value_or("");  // one or more, comma-separated
    if (loopback_address(e.master_addr)) gloo_options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    for (size_t start = 0, comma = 0; !loopback_address(e.master_addr) && start < interfaces.size(); start = comma + 1) {
      comma = std::min(interfaces.find(',', start), interfaces.size());
      const std::string name = interfaces.substr(start, comma - start);
      try {
        if (!name.empty()) gloo_options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(name));
      } catch (const c10::Error& error) {
        throw UserError("ddp", "GLOO_SOCKET_IFNAME='" + interfaces + "': Gloo cannot use the interface '" + name + "' (" +
                                   error.what_without_backtrace() + "); give this machine's network interfaces, as `ip -brief link` lists them");
      }
    }
    if (gloo_options->devices.empty()) gloo_options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    c10::intrusive_ptr<c10d::ProcessGroupGloo> backend;  // (its connection to every rank: a rank gone now fails here)
    run_collective([&] { backend = c10::make_intrusive<c10d::ProcessGroupGloo>(store_, static_cast<int>(e.rank), static_cast<int>(e.world_size), gloo_options); });
    group_->setBackend(c10::DeviceType::CPU, c10d::ProcessGroup::BackendType::GLOO, backend);
    if (device.is_cuda()) group_->setBackend(c10::DeviceType::CUDA, c10d::ProcessGroup::BackendType::GLOO, backend);
    if (config.ddp.backend == "shm") {
      if (!e.all_on_this_machine)
        throw UserError("ddp", "ddp.backend=shm needs every rank on this machine (LOCAL_WORLD_SIZE=WORLD_SIZE, or MASTER_ADDR on loopback; here " +
                                   std::to_string(e.world_size) + " ranks, MASTER_ADDR " + e.master_addr + "); use gloo");
      try {
        shared_memory_ = std::make_unique<SharedMemoryAllReduce>(*store_, static_cast<int>(e.rank), static_cast<int>(e.world_size), timeout);
      } catch (const SharedMemoryUnavailable& error) {  // on every rank alike
        if (!gloo_without_shared_memory) throw UserError("ddp", std::string(error.what()) + "; use ddp.backend=gloo");
        if (e.rank == 0) std::fprintf(stderr, "[train] warning: %s; ddp.backend=auto averages the gradients with gloo instead\n", error.what());
        config_.ddp.backend = "gloo";
      }
    }
  }
}

// ProcessGroup::shutdown/abort exist from LibTorch 2.5; before that the backends' destructors clean up.
DistributedContext::~DistributedContext() {
#if TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 5
  if (group_ && !aborted_) {
    try {
      group_->shutdown();
    } catch (const std::exception&) {
    }
  }
#endif
}

void DistributedContext::abort() {
  aborted_ = true;
#if TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 5
  if (group_) group_->abort();
#endif
}

void DistributedContext::broadcast_module(torch::nn::Module& module) {
  std::vector<at::Tensor> tensors;
  for (auto& p : module.parameters()) tensors.push_back(p.detach());
  for (auto& b : module.buffers()) tensors.push_back(b.detach());
  if (!tensors.empty()) run_collective([&] { c10d::broadcast_coalesced(group_, tensors, 250 * 1024 * 1024, 0); });
}

void DistributedContext::broadcast_buffers(torch::nn::Module& module) {
  std::vector<at::Tensor> tensors;
  for (auto& b : module.buffers()) tensors.push_back(b.detach());
  if (!tensors.empty()) run_collective([&] { c10d::broadcast_coalesced(group_, tensors, 250 * 1024 * 1024, 0); });
}

void DistributedContext::attach_reducer(const std::vector<torch::Tensor>& parameters) {
  if (!config_.ddp.overlap) return;  // after_backward() reduces instead
  const auto cap = static_cast<size_t>(config_.ddp.bucket_cap_mb * 1024 * 1024);
  auto [buckets, limits] = c10d::compute_bucket_assignment_by_size(parameters, {kFirstBucketBytes, cap}, std::vector<bool>(parameters.size(), false));
  // Reverse the buckets: gradients arrive roughly in reverse parameter order during backward.
  std::reverse(buckets.begin(), buckets.end());
  std::reverse(limits.begin(), limits.end());
  // The rebuild after the first backward (before_forward) sizes the buckets as this assignment did.
  reducer_ = make_reducer(parameters, buckets, limits, group_, static_cast<int64_t>(cap), config_.ddp.gradient_as_bucket_view);
  if (shared_memory_) reducer_->register_comm_hook(shared_memory_->comm_hook());
  if (config_.ddp.comm_hook == "fp16") reducer_->register_comm_hook(std::make_unique<CompressCommHook>(group_, torch::kHalf));
  if (config_.ddp.comm_hook == "bf16") reducer_->register_comm_hook(std::make_unique<CompressCommHook>(group_, torch::kBFloat16));
}

void DistributedContext::before_forward() {
  if (!reducer_) return;
  reducer_->prepare_for_forward();
  // As DistributedDataParallel's forward: once, after the first backward, the buckets are rebuilt
  // in the order gradients arrived (collective); until then every backward records that order,
  // which would grow for the whole run.
  run_collective([&] { reducer_->rebuild_buckets(); });
}

void DistributedContext::before_backward() {
  if (reducer_) reducer_->prepare_for_backward({});
}

// Every rank's buffer has a slot for every parameter, zeros where this rank has no gradient (a
// branch its batch did not take), and after them a flag per parameter that this rank has one: the
// buffers line up whatever each rank's batch used, and a gradient no rank has stays undefined.
void DistributedContext::after_backward(const std::vector<torch::Tensor>& parameters) {
  std::vector<at::Tensor> parts;
  std::vector<float> present;
  for (const auto& p : parameters) {
    parts.push_back(p.grad().defined() ? p.grad().reshape({-1}) : torch::zeros({p.numel()}, p.options()));
    present.push_back(p.grad().defined() ? 1.0f : 0.0f);
  }
  // (Every gradient here, the usual step: flags made on the device, no copy from the host to wait for.)
  const bool all_here = std::all_of(present.begin(), present.end(), [](float f) { return f > 0; });
  parts.push_back(all_here ? torch::ones({static_cast<int64_t>(present.size())}, parts.front().options())
                           : torch::tensor(present).to(parts.front().options()));
  std::vector<at::Tensor> flat = {torch::cat(parts)};
  if (shared_memory_) {
    shared_memory_->average(flat[0]);
  } else {
    flat[0].div_(static_cast<double>(env_.world_size));
    run_collective([&] { group_->allreduce(flat)->wait(); });
  }
  // (The flags are read back only where this rank lacks a gradient.)
  const at::Tensor any_rank = all_here ? at::Tensor() : flat[0].narrow(0, flat[0].numel() - static_cast<int64_t>(parameters.size()), static_cast<int64_t>(parameters.size())).cpu();
  int64_t offset = 0;
  for (size_t i = 0; i < parameters.size(); ++i) {
    torch::Tensor p = parameters[i];
    const at::Tensor averaged = flat[0].narrow(0, offset, p.numel()).view_as(p);
    offset += p.numel();
    if (p.grad().defined()) p.grad().copy_(averaged);
    else if (any_rank[static_cast<int64_t>(i)].item<float>() > 0) p.mutable_grad() = averaged.clone();
  }
}

bool DistributedContext::any(bool flag) {
  std::vector<at::Tensor> t = {torch::tensor({flag ? 1.0f : 0.0f})};
  if (device_.is_cuda() && config_.ddp.backend == "nccl") t[0] = t[0].to(device_);
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::MAX;
  run_collective([&] { group_->allreduce(t, options)->wait(); });
  return t[0].item<float>() > 0;
}

std::vector<double> DistributedContext::sum(const std::vector<double>& values) {
  std::vector<at::Tensor> t = {torch::tensor(values, torch::kDouble)};
  if (device_.is_cuda() && config_.ddp.backend == "nccl") t[0] = t[0].to(device_);
  run_collective([&] { group_->allreduce(t)->wait(); });  // SUM
  const auto summed = t[0].cpu();
  return std::vector<double>(summed.data_ptr<double>(), summed.data_ptr<double>() + summed.numel());
}

std::vector<nlohmann::json> DistributedContext::gather_json(const nlohmann::json& mine, const std::string& key) {
  const std::string text = mine.dump();
  store_->set("dyno/" + key + "/" + std::to_string(env_.rank), std::vector<uint8_t>(text.begin(), text.end()));
  std::vector<nlohmann::json> out;
  for (int64_t r = 0; r < (env_.rank == 0 ? env_.world_size : 0); ++r) {
    auto value = store_->get("dyno/" + key + "/" + std::to_string(r));
    out.push_back(nlohmann::json::parse(std::string(value.begin(), value.end())));
  }
  return out;
}

}  // namespace dyno
