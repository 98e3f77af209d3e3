#include "dyno/suite/nvtx_range.h"

#if DYNO_WITH_NVTX
#include <nvtx3/nvToolsExt.h>

#include <mutex>
#include <string>
#include <unordered_map>

namespace dyno {
namespace {

struct DynoDomain {
  static constexpr const char* name = "dyno";
};

nvtxDomainHandle_t domain() {
  static nvtxDomainHandle_t handle = nvtxDomainCreateA(DynoDomain::name);
  return handle;
}

// Registered strings make a push cheap for tools; cache one handle per distinct name.
nvtxStringHandle_t registered(const char* name) {
  static std::mutex mutex;
  static std::unordered_map<std::string, nvtxStringHandle_t> handles;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = handles.find(name);
  if (it != handles.end()) return it->second;
  return handles[name] = nvtxDomainRegisterStringA(domain(), name);
}

}  // namespace

NvtxRange::NvtxRange(const char* name) {
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attributes.message.registered = registered(name);
  nvtxDomainRangePushEx(domain(), &attributes);
}

NvtxRange::~NvtxRange() { nvtxDomainRangePop(domain()); }

}  // namespace dyno

#else  // built without NVTX3 (CMakeLists.txt): no ranges

namespace dyno {

NvtxRange::NvtxRange(const char*) {}
NvtxRange::~NvtxRange() = default;

}  // namespace dyno

#endif
