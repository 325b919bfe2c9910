#include "apps/kokoro_server/api_error.h"

#include <nlohmann/json.hpp>

namespace kokoro::server {

std::string ApiError::type() const {
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

std::string ApiError::json() const {
  nlohmann::json error = {{"message", message}, {"type", type()}, {"param", nullptr}, {"code", nullptr}};
  if (!param.empty()) error["param"] = param;
  if (!code.empty()) error["code"] = code;
  // error_handler_t::replace: a message quoting the client's bytes never makes the error itself fail.
  return nlohmann::json{{"error", error}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

ApiError bad_request(std::string message, std::string param, std::string code) {
  return ApiError{400, std::move(message), std::move(param), std::move(code)};
}

}  // namespace kokoro::server
