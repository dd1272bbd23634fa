// Internal: typed reads of config.json fields. A key whose value is null counts as absent (HF
// reads null as None). Every error names the key with its path ("text_config.rope_scaling.factor")
// and the value found; integers must be exact and fit in int64 (no cast of 1e300 or 2^63).
#ifndef POSENC_LIB_FREQS_JSON_FIELDS_H_
#define POSENC_LIB_FREQS_JSON_FIELDS_H_

#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "posenc/status.h"

namespace posenc {
namespace freqs {

using nlohmann::json;

// obj is an object holding key with a non-null value.
bool Present(const json& obj, const char* key);

// Each reads obj[key] into *out when present (leaving *out alone when absent); `path` prefixes
// the key in messages ("" or "text_config.").
Status GetNumber(const json& obj, const char* key, const std::string& path, std::optional<double>* out);
Status GetInt(const json& obj, const char* key, const std::string& path, std::optional<int64_t>* out);
Status GetBool(const json& obj, const char* key, const std::string& path, std::optional<bool>* out);
Status GetString(const json& obj, const char* key, const std::string& path, std::optional<std::string>* out);
Status GetNumberList(const json& obj, const char* key, const std::string& path,
                     std::optional<std::vector<double>>* out);
Status GetIntList(const json& obj, const char* key, const std::string& path,
                  std::optional<std::vector<int64_t>>* out);
Status GetStringList(const json& obj, const char* key, const std::string& path,
                     std::optional<std::vector<std::string>>* out);
// An object or null/absent (*out = nullptr then).
Status GetObject(const json& obj, const char* key, const std::string& path, const json** out);

// The text of the config file at `path` ("config path \"...\": cannot open" when unreadable).
Status ReadConfigFile(const std::string& path, std::string* text);

// parse(doc) of json_text's document, with nlohmann-json's exceptions (invalid JSON, a value
// of the wrong type) as kInvalidArgument: those describe the caller's input. Out of memory is
// left to the entries' one guard (core::Guarded).
template <class Parse>
Status ParseJsonText(const std::string& json_text, const Parse& parse) {
  try {
    return parse(json::parse(json_text));
  } catch (const json::exception& e) {
    return Status(StatusCode::kInvalidArgument, std::string("config: invalid JSON: ") + e.what());
  }
}

}  // namespace freqs
}  // namespace posenc

#endif  // POSENC_LIB_FREQS_JSON_FIELDS_H_
