// AutocastScope: enables autocast for one device type and dtype for the lifetime of the scope
// (the C++ equivalent of `with torch.autocast(device, dtype)`); a disabled scope does nothing.
#pragma once

#include <ATen/autocast_mode.h>

namespace dyno {

class AutocastScope {
 public:
  AutocastScope(c10::DeviceType type, bool enabled, c10::ScalarType dtype)
      : type_(type), enabled_(enabled), was_enabled_(at::autocast::is_autocast_enabled(type)),
        was_dtype_(at::autocast::get_autocast_dtype(type)) {
    if (!enabled_) return;
    at::autocast::set_autocast_enabled(type_, true);
    at::autocast::set_autocast_dtype(type_, dtype);
    at::autocast::increment_nesting();
  }
  ~AutocastScope() {
    if (!enabled_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(type_, was_enabled_);
    at::autocast::set_autocast_dtype(type_, was_dtype_);
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType type_;
  bool enabled_;
  bool was_enabled_;
  c10::ScalarType was_dtype_;
};

}  // namespace dyno
