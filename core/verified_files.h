// Records of files that passed a full content check, so that the check runs once per file version instead
// of at every start (the model file's NaN/Inf scan reads all 325 MB).
//
// A record is kept per file in <user_cache_dir()>/verified/ and holds the file's identity: device, inode,
// size, modification and status-change times (ns). Any write to the file, a replacement (new inode) or a
// truncation changes the identity, so the next open checks the contents again. What a record cannot
// notice is damage that bypasses the file system (bit rot on the disk): `kokoro-convert --check` always
// reads everything.
#pragma once
#include <sys/stat.h>

#include <optional>
#include <string>

namespace kokoro {

// The identity of an open file (from fstat), with a tag naming what was checked (e.g. "model v1 finite").
std::string file_identity(const struct stat& st, const std::string& what);
// True if path was recorded with exactly this identity.
bool was_verified(const std::string& path, const std::string& identity);
// Records it, with an optional one-line note (e.g. the content hash the check computed); silently does
// nothing when the cache directory cannot be written (the check then runs at every open, which is
// correct, only slower).
void record_verified(const std::string& path, const std::string& identity, const std::string& note = "");
// The note recorded with exactly this identity, if any.
std::optional<std::string> verified_note(const std::string& path, const std::string& identity);

}  // namespace kokoro
