#include "dyno/reports/json_difference.h"

namespace dyno {

std::string first_difference(const std::string& name, const nlohmann::json& a, const nlohmann::json& b) {
  const nlohmann::json patch = nlohmann::json::diff(a, b);
  if (patch.empty()) return "";
  const nlohmann::json& change = patch.front();
  std::string path = change["path"].get<std::string>(), op = change["op"].get<std::string>();
  nlohmann::json::json_pointer pointer(path);
  // A short list that differs is shown whole ("axes/batch_size [32,64], not [64,128]"); a long one
  // by its first differing element, which a cut-off list would hide.
  if (!pointer.empty() && a.contains(pointer.parent_pointer()) && b.contains(pointer.parent_pointer()) &&
      a.at(pointer.parent_pointer()).is_array() && b.at(pointer.parent_pointer()).is_array() &&
      a.at(pointer.parent_pointer()).dump().size() <= 200 && b.at(pointer.parent_pointer()).dump().size() <= 200) {
    pointer = pointer.parent_pointer();
    path = pointer.to_string();
    op = "replace";
  }
  auto shown = [](const nlohmann::json& value) {
    const std::string text = value.dump();
    return text.size() > 200 ? text.substr(0, 200) + "..." : text;
  };
  const std::string was = op == "add" ? "(none)" : shown(a.at(pointer));
  const std::string now = op == "remove" ? "(none)" : shown(b.at(pointer));
  return name + path + " " + was + ", not " + now;
}

}  // namespace dyno
