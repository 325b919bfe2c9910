// An error as the OpenAI API reports it: an HTTP status and {"error": {"message", "type", "param", "code"}}.
// Clients written for OpenAI (the `openai` package raises BadRequestError, AuthenticationError, ... from the
// status and shows `message`) read it unchanged.
#pragma once

#include <string>

namespace kokoro::server {

struct ApiError {
  ApiError(int status_, std::string message_, std::string param_ = "", std::string code_ = "")
      : status(status_), message(std::move(message_)), param(std::move(param_)), code(std::move(code_)) {}
  int status = 400;
  std::string message;
  std::string param;  // the request field at fault, "" for none (JSON null)
  std::string code;   // a machine-readable reason ("voice_not_found"), "" for none

  // "invalid_request_error" for 4xx, "server_error" for 5xx, as OpenAI's API does.
  std::string type() const;
  std::string json() const;
};

ApiError bad_request(std::string message, std::string param = "", std::string code = "");

}  // namespace kokoro::server
