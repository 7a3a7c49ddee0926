// SPDX-License-Identifier: MIT
// JSON adapters shared by every format (json.hpp).
#include <nflens/json.hpp>

namespace nflens {

void to_json(nlohmann::json& j, const diagnostic& d) {
  j = nlohmann::json::object();
  j["severity"] = severity_name(d.level);
  j["code"] = code_name(d.code);
  j["message"] = d.message;
  if (d.file) {
    const location at = d.file->locate(d.where);
    j["file"] = d.file->name();
    j["line"] = at.line;
    j["column"] = at.column;
  }
  if (!d.notes.empty()) {
    auto& notes = j["notes"] = nlohmann::json::array();
    for (const auto& n : d.notes) {
      nlohmann::json note{{"message", n.message}};
      if (n.file) {
        const location at = n.file->locate(n.where);
        note["file"] = n.file->name();
        note["line"] = at.line;
        note["column"] = at.column;
      }
      notes.push_back(std::move(note));
    }
  }
}

}  // namespace nflens
