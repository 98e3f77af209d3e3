#include "reports/json_difference.h"

namespace dyno {

std::string first_difference(const std::string& name, const nlohmann::json& a, const nlohmann::json& b) {
  const nlohmann::json patch = nlohmann::json::diff(a, b);
  if (patch.empty()) return "";
  const nlohmann::json& change = patch.front();
  const std::string path = change["path"].get<std::string>(), op = change["op"].get<std::string>();
  const nlohmann::json::json_pointer pointer(path);
  auto shown = [](const nlohmann::json& value) {
    const std::string text = value.dump();
    return text.size() > 200 ? text.substr(0, 200) + "..." : text;
  };
  const std::string was = op == "add" ? "(none)" : shown(a.at(pointer));
  const std::string now = op == "remove" ? "(none)" : shown(b.at(pointer));
  return name + path + " " + was + ", not " + now;
}

}  // namespace dyno
