// The safetensors format (Hugging Face): 8 bytes of little-endian header length N, N bytes of
// JSON — {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
// "__metadata__": {string: string}} — then the tensors' raw little-endian bytes, offsets relative
// to the end of the header. Reading checks everything a writer could get wrong or a damaged file
// could hold (the header's length and JSON, each tensor's dtype, shape, offsets inside the data and
// matching the shape, no overlaps or gaps) and names the file and the tensor; F32, F64, F16 and
// BF16 tensors read as float (the file's dtype kept beside). Writing produces each tensor in its
// dtype (F32, BF16 or F16: the float values rounded to nearest even), in name order, through a
// temporary file renamed into place.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace trellis::trainer {

struct SafeTensor {
    std::vector<std::int64_t> shape;
    std::vector<float> values; // row-major
    std::string dtype = "F32"; // in the file: F32, F64, BF16 or F16 (writing: F32, BF16 or F16)
};

struct SafetensorsFile {
    std::map<std::string, SafeTensor> tensors;
    std::map<std::string, std::string> metadata;
};

// "" or the reason, naming `path` and the tensor.
std::string readSafetensors(const std::string &path, SafetensorsFile &out);
std::string writeSafetensors(const std::string &path, const SafetensorsFile &file);

} // namespace trellis::trainer
