#include "lib/freqs/json_fields.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "lib/core/status_util.h"

namespace posenc {
namespace freqs {
namespace {

using core::Err;
constexpr auto kInvalid = StatusCode::kInvalidArgument;

// The JSON value as written, shortened for messages.
std::string Shown(const json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

Status Expected(const std::string& path, const char* key, const char* what, const json& v) {
  return Err(kInvalid, path, key, ": expected ", what, ", got ", v.type_name(), " ", Shown(v));
}

// An exact integer that fits in int64: JSON integers below 2^63, or integral doubles within
// (-2^63, 2^63). Anything else (1e300, 2^63, 4.5, NaN) is rejected, never cast.
bool ToInt64(const json& v, int64_t* out) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return false;
    *out = static_cast<int64_t>(u);
    return true;
  }
  if (v.is_number_integer()) {
    *out = v.get<int64_t>();
    return true;
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!(std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9223372036854775808.0)) return false;
    *out = static_cast<int64_t>(d);
    return true;
  }
  return false;
}

}  // namespace

bool Present(const json& obj, const char* key) {
  return obj.is_object() && obj.contains(key) && !obj.at(key).is_null();
}

Status GetNumber(const json& obj, const char* key, const std::string& path, std::optional<double>* out) {
  if (!Present(obj, key)) return Status::Ok();
  const json& v = obj.at(key);
  if (!v.is_number()) return Expected(path, key, "a number", v);
  *out = v.get<double>();
  return Status::Ok();
}

Status GetInt(const json& obj, const char* key, const std::string& path, std::optional<int64_t>* out) {
  if (!Present(obj, key)) return Status::Ok();
  const json& v = obj.at(key);
  int64_t i = 0;
  if (!ToInt64(v, &i)) return Expected(path, key, "an integer below 2^63 in magnitude", v);
  *out = i;
  return Status::Ok();
}

Status GetBool(const json& obj, const char* key, const std::string& path, std::optional<bool>* out) {
  if (!Present(obj, key)) return Status::Ok();
  const json& v = obj.at(key);
  if (!v.is_boolean()) return Expected(path, key, "a boolean", v);
  *out = v.get<bool>();
  return Status::Ok();
}

Status GetString(const json& obj, const char* key, const std::string& path,
                 std::optional<std::string>* out) {
  if (!Present(obj, key)) return Status::Ok();
  const json& v = obj.at(key);
  if (!v.is_string()) return Expected(path, key, "a string", v);
  *out = v.get<std::string>();
  return Status::Ok();
}

Status GetNumberList(const json& obj, const char* key, const std::string& path,
                     std::optional<std::vector<double>>* out) {
  if (!Present(obj, key)) return Status::Ok();
  const json& v = obj.at(key);
  if (!v.is_array()) return Expected(path, key, "a list of numbers", v);
  std::vector<double> list;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number()) {
      return Err(kInvalid, path, key, "[", i, "]: expected a number, got ", v[i].type_name());
    }
    list.push_back(v[i].get<double>());
  }
  *out = std::move(list);
  return Status::Ok();
}

Status GetIntList(const json& obj, const char* key, const std::string& path,
                  std::optional<std::vector<int64_t>>* out) {
  if (!Present(obj, key)) return Status::Ok();
  const json& v = obj.at(key);
  if (!v.is_array()) return Expected(path, key, "a list of integers", v);
  std::vector<int64_t> list;
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t x = 0;
    if (!ToInt64(v[i], &x)) {
      return Err(kInvalid, path, key, "[", i, "]: expected an integer, got ", v[i].type_name(), " ",
                 Shown(v[i]));
    }
    list.push_back(x);
  }
  *out = std::move(list);
  return Status::Ok();
}

Status GetStringList(const json& obj, const char* key, const std::string& path,
                     std::optional<std::vector<std::string>>* out) {
  if (!Present(obj, key)) return Status::Ok();
  const json& v = obj.at(key);
  if (!v.is_array()) return Expected(path, key, "a list of strings", v);
  std::vector<std::string> list;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) {
      return Err(kInvalid, path, key, "[", i, "]: expected a string, got ", v[i].type_name());
    }
    list.push_back(v[i].get<std::string>());
  }
  *out = std::move(list);
  return Status::Ok();
}

Status GetObject(const json& obj, const char* key, const std::string& path, const json** out) {
  *out = nullptr;
  if (!Present(obj, key)) return Status::Ok();
  const json& v = obj.at(key);
  if (!v.is_object()) {
    return Err(kInvalid, path, key, ": expected an object or null, got ", v.type_name());
  }
  *out = &v;
  return Status::Ok();
}

Status ReadConfigFile(const std::string& path, std::string* text) {
  std::ifstream f(path);
  if (!f) return core::Err(StatusCode::kInvalidArgument, "config path \"", path, "\": cannot open");
  std::stringstream ss;
  ss << f.rdbuf();
  *text = ss.str();
  return Status::Ok();
}

}  // namespace freqs
}  // namespace posenc
