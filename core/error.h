// One exception type for everything a user can get wrong (files, voices, text, devices). Messages name the
// file or object involved so that the CLI can print them as they are.
#pragma once
#include <stdexcept>
#include <string>

namespace kokoro {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace kokoro
