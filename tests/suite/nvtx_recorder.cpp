// A minimal NVTX injection library for tests (no GPU, no Nsight needed): loaded by NVTX through
// NVTX_INJECTION64_PATH, it records push/pop of ranges in the "dyno" domain and writes them, one
// "push NAME" / "pop NAME" line each, to the file named by DYNO_NVTX_RECORD at process exit.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Recorder {
  std::mutex mutex;
  std::vector<std::string> lines;
  std::vector<std::string> stack;
  ~Recorder() {
    const char* path = std::getenv("DYNO_NVTX_RECORD");
    if (!path) return;
    if (FILE* f = std::fopen(path, "w")) {
      for (const auto& line : lines) std::fprintf(f, "%s\n", line.c_str());
      std::fclose(f);
    }
  }
};

Recorder& recorder() {
  static Recorder r;
  return r;
}

struct Domain {
  std::string name;
};

nvtxDomainHandle_t domain_create(const char* name) {
  return reinterpret_cast<nvtxDomainHandle_t>(new Domain{name});
}

nvtxStringHandle_t register_string(nvtxDomainHandle_t, const char* text) {
  return reinterpret_cast<nvtxStringHandle_t>(strdup(text));
}

bool is_dyno(nvtxDomainHandle_t domain) {
  return domain && reinterpret_cast<Domain*>(domain)->name == "dyno";
}

int range_push(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
  if (!is_dyno(domain)) return 0;
  std::string name;
  if (attributes->messageType == NVTX_MESSAGE_TYPE_REGISTERED) name = reinterpret_cast<const char*>(attributes->message.registered);
  else if (attributes->messageType == NVTX_MESSAGE_TYPE_ASCII) name = attributes->message.ascii;
  auto& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.lines.push_back("push " + name);
  r.stack.push_back(name);
  return static_cast<int>(r.stack.size()) - 1;
}

int range_pop(nvtxDomainHandle_t domain) {
  if (!is_dyno(domain)) return 0;
  auto& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.stack.empty()) {
    r.lines.push_back("pop <unbalanced>");
    return -1;
  }
  r.lines.push_back("pop " + r.stack.back());
  r.stack.pop_back();
  return static_cast<int>(r.stack.size());
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (!callbacks) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || !table) return 0;
  recorder();  // construct before first use so it is destroyed (and written) at exit
  *table[NVTX_CBID_CORE2_DomainCreateA] = reinterpret_cast<NvtxFunctionPointer>(&domain_create);
  *table[NVTX_CBID_CORE2_DomainRegisterStringA] = reinterpret_cast<NvtxFunctionPointer>(&register_string);
  *table[NVTX_CBID_CORE2_DomainRangePushEx] = reinterpret_cast<NvtxFunctionPointer>(&range_push);
  *table[NVTX_CBID_CORE2_DomainRangePop] = reinterpret_cast<NvtxFunctionPointer>(&range_pop);
  return 1;
}
