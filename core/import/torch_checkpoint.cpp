#include "core/import/torch_checkpoint.h"

#include <algorithm>
#include <fstream>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "core/import/torch_archive.h"

namespace kokoro {

namespace ckpt {

namespace {

constexpr size_t kMaxSmallRecord = 64;  // version, byteorder

std::string dict_key(const Unpickled& g, uint32_t key, const std::string& where) {
  const Value& k = g.at(key);
  if (k.kind == Kind::String) return k.text;
  if (k.kind == Kind::Int) return std::to_string(k.integer);
  throw Error(where + ": dict key of type " + kind_name(k.kind) + " (expected str)");
}

class Collector {
 public:
  Collector(const Unpickled& g, const std::string& what) : g_(g), what_(what), visited_(g.values.size(), false) {}

  void walk(uint32_t dict, const std::string& prefix, size_t depth) {
    const std::string where = prefix.empty() ? what_ : what_ + ": key " + prefix;
    if (depth > kMaxNestingDepth) throw Error(where + ": dicts nested more than " + std::to_string(kMaxNestingDepth) + " deep");
    if (visited_[dict]) throw Error(where + ": the same dict appears twice (shared or cyclic)");
    visited_[dict] = true;

    // Python dict semantics: a repeated key replaces the earlier value in place. Two different raw keys that
    // become the same name once "module." is dropped are an error, not a silent choice.
    struct Entry {
      std::string raw, name;
      uint32_t value;
    };
    std::vector<Entry> entries;
    std::unordered_map<std::string, size_t> by_name;
    const std::vector<uint32_t>& items = g_.at(dict).items;
    for (size_t i = 0; i + 1 < items.size(); i += 2) {
      std::string raw = dict_key(g_, items[i], where);
      std::string name = raw.starts_with("module.") ? raw.substr(7) : raw;
      if (name.empty()) throw Error(where + ": empty key");
      auto [it, fresh] = by_name.try_emplace(name, entries.size());
      if (fresh) {
        entries.push_back(Entry{std::move(raw), std::move(name), items[i + 1]});
      } else if (entries[it->second].raw == raw) {
        entries[it->second].value = items[i + 1];
      } else {
        throw Error(where + ": keys '" + entries[it->second].raw + "' and '" + raw + "' collide once 'module.' is dropped");
      }
    }

    for (const Entry& e : entries) {
      const std::string full = prefix.empty() ? e.name : prefix + "." + e.name;
      if (full.size() > kMaxNameLength) throw Error(where + ": key names longer than " + std::to_string(kMaxNameLength));
      const Value& v = g_.at(e.value);
      if (v.kind == Kind::Tensor) {
        if (!names_.insert(full).second) throw Error(what_ + ": key " + full + " appears twice after flattening");
        if (out_.size() >= kMaxTensors) throw Error(what_ + ": more than " + std::to_string(kMaxTensors) + " tensors");
        out_.push_back(NamedTensor{full, static_cast<uint32_t>(v.integer)});
      } else if (v.kind == Kind::Dict) {
        walk(e.value, full, depth + 1);
      } else {
        throw Error(what_ + ": key " + full + " holds a " + kind_name(v.kind) + ", expected a tensor or a dict of tensors");
      }
    }
  }

  std::vector<NamedTensor> take() { return std::move(out_); }

 private:
  const Unpickled& g_;
  const std::string& what_;
  std::vector<bool> visited_;
  std::unordered_set<std::string> names_;
  std::vector<NamedTensor> out_;
};

std::string read_small_record(const ZipArchive& zip, const std::string& entry) {
  const std::vector<uint8_t> bytes = zip.read(entry, kMaxSmallRecord);
  std::string s(bytes.begin(), bytes.end());
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// The directory every record lives in ("kokoro-v1_0/", "archive/"...), found from its data.pkl.
std::string archive_prefix(const ZipArchive& zip) {
  std::string prefix;
  for (const std::string& name : zip.entry_names()) {
    const size_t slash = name.find('/');
    if (slash == std::string::npos || name.substr(slash + 1) != "data.pkl") continue;
    if (!prefix.empty() && prefix != name.substr(0, slash + 1))
      throw Error(zip.label() + ": several data.pkl records (" + prefix + "data.pkl, " + name + ")");
    prefix = name.substr(0, slash + 1);
  }
  if (prefix.empty())
    throw Error(zip.label() + ": no <archive>/data.pkl record: not a torch.save checkpoint");
  return prefix;
}

Unpickled open_pickle(const ZipArchive& zip, std::string& prefix) {
  prefix = archive_prefix(zip);
  for (const std::string& version_record : {prefix + "version", prefix + ".data/version"}) {
    if (!zip.has(version_record)) continue;
    const std::string v = read_small_record(zip, version_record);
    if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
      throw Error(zip.label() + ": record " + version_record + " is not a version number");
  }
  if (zip.has(prefix + "byteorder")) {
    const std::string order = read_small_record(zip, prefix + "byteorder");
    if (order != "little")
      throw Error(zip.label() + ": byte order '" + order + "' is not supported (little-endian checkpoints only)");
  }
  const std::vector<uint8_t> pickle = zip.read(prefix + "data.pkl", kMaxPickleBytes);
  return unpickle(pickle.data(), pickle.size(), zip.label() + ": " + prefix + "data.pkl");
}

StorageReader archive_storage_reader(const ZipArchive& zip, const std::string& prefix) {
  return [&zip, prefix](const StorageRef& s) {
    const uint64_t nbytes = static_cast<uint64_t>(s.numel) * dtype_size(s.dtype);  // checked when unpickled
    return zip.read(prefix + "data/" + s.key, nbytes);
  };
}

}  // namespace

std::vector<NamedTensor> collect_state_dict(const Unpickled& g, const std::string& what) {
  const Value& root = g.at(g.root);
  if (root.kind == Kind::Tensor) throw Error(what + ": holds a single tensor, not a dict of tensors");
  if (root.kind != Kind::Dict) throw Error(what + ": holds a " + std::string(kind_name(root.kind)) + ", not a dict of tensors");
  Collector c(g, what);
  c.walk(g.root, "", 0);
  return c.take();
}

uint32_t collect_single_tensor(const Unpickled& g, const std::string& what) {
  const Value& root = g.at(g.root);
  if (root.kind != Kind::Tensor) throw Error(what + ": holds a " + std::string(kind_name(root.kind)) + ", not a single tensor");
  return static_cast<uint32_t>(root.integer);
}

StateDict materialise(const Unpickled& g, const std::vector<NamedTensor>& named, const StorageReader& read,
                      const std::string& what) {
  std::unordered_map<uint32_t, size_t> uses;
  for (const NamedTensor& n : named) ++uses[g.tensors.at(n.tensor).storage];

  // The same tensor may be named many times; cap the output at a multiple of the storage bytes actually
  // read (verified against the archive), so a small file cannot ask for an unbounded amount of memory.
  int64_t storage_elements = 0, output_elements = 0;
  StateDict out;
  std::unordered_map<uint32_t, std::vector<uint8_t>> cache;
  for (const NamedTensor& n : named) {
    const std::string where = what + ": key " + n.name;
    const TensorRef& t = g.tensors[n.tensor];
    const StorageRef& s = g.storages[t.storage];
    auto it = cache.find(t.storage);
    if (it == cache.end()) {
      try {
        it = cache.emplace(t.storage, read(s)).first;
      } catch (const Error& e) {
        throw Error(std::string(e.what()) + " (storage of key " + n.name + ")");
      }
      if (it->second.size() != static_cast<uint64_t>(s.numel) * dtype_size(s.dtype))
        throw Error(where + ": storage " + s.key + " has " + std::to_string(it->second.size()) + " bytes, the pickle says " +
                    std::to_string(s.numel) + " " + dtype_name(s.dtype) + " elements");
      storage_elements += s.numel;
    }
    output_elements += check_layout(t.layout, s.numel, where);
    if (output_elements > 4 * storage_elements + kMaxExpandedNumel)
      throw Error(where + ": tensors total " + std::to_string(output_elements) + " elements from storages of " +
                  std::to_string(storage_elements));
    out[n.name] = decode_tensor(it->second.data(), it->second.size(), s.numel, s.dtype, t.layout,
                                where + " (storage " + s.key + ")");
    if (--uses[t.storage] == 0) cache.erase(it);
  }
  return out;
}

StateDict read_state_dict(const ZipArchive& zip) {
  std::string prefix;
  const Unpickled g = open_pickle(zip, prefix);
  return materialise(g, collect_state_dict(g, zip.label()), archive_storage_reader(zip, prefix), zip.label());
}

LoadedTensor read_single_tensor(const ZipArchive& zip) {
  std::string prefix;
  const Unpickled g = open_pickle(zip, prefix);
  const std::vector<NamedTensor> one{NamedTensor{"tensor", collect_single_tensor(g, zip.label())}};
  StateDict sd = materialise(g, one, archive_storage_reader(zip, prefix), zip.label());
  return std::move(sd.begin()->second);
}

}  // namespace ckpt

namespace {

// torch.save before 1.6 (or with _use_new_zipfile_serialization=False) wrote bare pickles, not zips.
void reject_legacy_format(const std::string& path, const std::string& label) {
  std::ifstream in(path, std::ios::binary);
  unsigned char head[2] = {0, 0};
  if (in.read(reinterpret_cast<char*>(head), 2) && head[0] == 0x80 && head[1] <= 5)
    throw Error(label + ": legacy torch.save format (a bare pickle, torch < 1.6) is not supported; re-save it "
                        "with a current torch");
}

}  // namespace

StateDict read_torch_checkpoint(const std::string& path) {
  const std::string label = "checkpoint " + path;
  reject_legacy_format(path, label);
  return ckpt::read_state_dict(ckpt::ZipArchive::open_file(path, label));
}

LoadedTensor read_torch_tensor(const std::string& path) {
  const std::string label = "tensor file " + path;
  reject_legacy_format(path, label);
  return ckpt::read_single_tensor(ckpt::ZipArchive::open_file(path, label));
}

}  // namespace kokoro
