// posenc._posenc: the nanobind layer under the Python package posenc (python/posenc/).
//
// This layer only translates: numpy arrays (already viewed by python/posenc/_args.py as logical
// [batch, seq, heads, head_dim] views, f16/bf16 as uint16 bit patterns) become posenc::Tensor
// views without copying, keyword values become RopeParams / SinusoidalParams, and a failed Status
// becomes ValueError (invalid_argument, unsupported), IndexError (out_of_range) or RuntimeError
// (internal) carrying the library's message. Every call into a kernel releases the GIL; the
// ndarray arguments keep their arrays alive meanwhile.
//
// Layer types: a loaded config is a posenc::ModelRope (one RopeConfig per RoPE layer type, named
// as the model names them: "sliding_attention", "full_attention"; a config without layer types has
// one, "full_attention"). ModelConfig::ForLayerType is the one place that maps a layer type name
// to the RopeConfig used.
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "posenc/freqs.h"
#include "posenc/model.h"
#include "posenc/rope.h"
#include "posenc/sinusoidal.h"
#include "posenc/targets.h"
#include "posenc/tensor.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace posenc {
namespace python {
namespace {

using InArray = nb::ndarray<nb::ro, nb::device::cpu>;   // read only, any dtype and strides
using OutArray = nb::ndarray<nb::device::cpu>;          // written
using Ints = nb::ndarray<nb::ro, nb::device::cpu, nb::c_contig>;
using Doubles = nb::ndarray<const double, nb::ndim<1>, nb::device::cpu, nb::c_contig>;

void Check(const Status& st) {
  if (st.ok()) return;
  switch (st.code()) {
    case StatusCode::kOutOfRange:
      throw nb::index_error(st.message().c_str());
    case StatusCode::kInternal:
      throw std::runtime_error(st.message());
    default:
      throw nb::value_error(st.message().c_str());
  }
}

DType ParseDType(const std::string& name) {
  if (name == "f32") return DType::kF32;
  if (name == "bf16") return DType::kBF16;
  if (name == "f16") return DType::kF16;
  throw nb::value_error(("dtype = \"" + name + "\": must be f32, bf16 or f16").c_str());
}

// A view of `a` (ndim `ndim`) as a posenc view of `dtype`: data pointer and element strides.
template <typename Array>
void CheckItemSize(const Array& a, DType dtype, const char* name) {
  if (a.itemsize() != DTypeSize(dtype)) {
    throw nb::value_error((std::string(name) + ": " + std::to_string(a.itemsize()) +
                           "-byte elements do not hold " + DTypeName(dtype))
                              .c_str());
  }
}

// An array argument of `rope` read through the buffer protocol, held for the call. nanobind's
// ndarray import goes through DLPack (~0.3 us an array); a decode step passes up to six arrays,
// which took more time than the kernel. None gives an absent view.
class ArrayBuffer {
 public:
  ArrayBuffer(nb::handle obj, bool writable) {
    if (obj.is_none()) return;
    const int flags = writable ? PyBUF_RECORDS : PyBUF_RECORDS_RO;  // strides and format
    if (PyObject_GetBuffer(obj.ptr(), &view_, flags) != 0) throw nb::python_error();
    held_ = true;
  }
  ~ArrayBuffer() {
    if (held_) PyBuffer_Release(&view_);
  }
  ArrayBuffer(const ArrayBuffer&) = delete;
  ArrayBuffer& operator=(const ArrayBuffer&) = delete;

  explicit operator bool() const { return held_; }
  void* data() const { return view_.buf; }
  size_t ndim() const { return static_cast<size_t>(view_.ndim); }
  size_t itemsize() const { return static_cast<size_t>(view_.itemsize); }
  size_t shape(size_t i) const { return static_cast<size_t>(view_.shape[i]); }
  bool is_float64() const {
    return view_.itemsize == 8 && view_.format != nullptr && std::strcmp(view_.format, "d") == 0;
  }
  size_t size() const {
    size_t n = 1;
    for (size_t i = 0; i < ndim(); ++i) n *= shape(i);
    return n;
  }
  // Stride of axis i in elements; an array whose byte stride is not a whole number of elements
  // (possible with numpy's as_strided) is refused.
  int64_t stride(size_t i, const char* name) const {
    const Py_ssize_t bytes = view_.strides[i];
    if (bytes % view_.itemsize != 0) {
      throw nb::value_error((std::string(name) + ": stride of " + std::to_string(bytes) +
                             " bytes on axis " + std::to_string(i) +
                             " is not a whole number of elements")
                                .c_str());
    }
    return static_cast<int64_t>(bytes / view_.itemsize);
  }

 private:
  Py_buffer view_{};
  bool held_ = false;
};

Tensor ToTensor(const ArrayBuffer& a, DType dtype, const char* name) {
  if (a.ndim() != 4) {
    throw nb::value_error((std::string(name) + " must be a 4-D view").c_str());
  }
  CheckItemSize(a, dtype, name);
  Tensor t;
  t.data = a.data();
  t.dtype = dtype;
  for (size_t i = 0; i < 4; ++i) {
    t.shape[i] = static_cast<int64_t>(a.shape(i));
    t.strides[i] = a.stride(i, name);
  }
  return t;
}

template <typename Array>
EmbeddingView ToEmbedding(const Array& a, DType dtype, const char* name) {
  if (a.ndim() != 3 || a.stride(2) != 1) {
    throw nb::value_error(
        (std::string(name) + " must be a 3-D view with d_model contiguous").c_str());
  }
  CheckItemSize(a, dtype, name);
  EmbeddingView v;
  v.data = const_cast<void*>(static_cast<const void*>(a.data()));
  v.dtype = dtype;
  v.batch = static_cast<int64_t>(a.shape(0));
  v.seq = static_cast<int64_t>(a.shape(1));
  v.d_model = static_cast<int64_t>(a.shape(2));
  v.stride_batch = a.stride(0);
  v.stride_seq = a.stride(1);
  return v;
}

// Positions from python/posenc/_args.py: ids [batch, seq] (int32 or int64, C order), per-batch
// offsets [batch] (int64), or a start offset. `ids` / `batch_offsets` must outlive the call.
Positions ToPositions(const std::optional<Ints>& ids, const std::optional<Ints>& batch_offsets,
                      int64_t offset) {
  if (ids) {
    const nb::dlpack::dtype dt = ids->dtype();
    if (dt == nb::dtype<int32_t>()) return Positions::Ids(static_cast<const int32_t*>(ids->data()));
    if (dt == nb::dtype<int64_t>()) return Positions::Ids(static_cast<const int64_t*>(ids->data()));
    throw nb::value_error("positions: must be int32 or int64");
  }
  if (batch_offsets) {
    if (batch_offsets->dtype() != nb::dtype<int64_t>()) {
      throw nb::value_error("offset: per-batch offsets must be int64");
    }
    return Positions::PerBatch(static_cast<const int64_t*>(batch_offsets->data()));
  }
  return Positions::Offset(offset);
}

// ---------------------------------------------------------------- objects
// A loaded model (posenc::ModelRope): one RopeConfig per RoPE layer type.
struct ModelConfig {
  ModelRope model;

  std::vector<std::string> LayerTypes() const {
    std::vector<std::string> names;
    for (const RopeLayerType& t : model.layer_types) names.push_back(t.name);
    return names;
  }
  // The RopeConfig of `layer_type`; None is allowed when every layer type has the same RoPE.
  const RopeConfig& ForLayerType(const std::optional<std::string>& layer_type) const {
    const RopeConfig* config = nullptr;
    if (layer_type) {
      Check(LayerRope(model, *layer_type, &config));
      return *config;
    }
    if (!SingleRope(model)) {
      std::string names;
      for (const std::string& n : LayerTypes()) names += (names.empty() ? "" : ", ") + n;
      throw nb::value_error(("layer_type = None: this model has several RoPE layer types (" +
                             names + "); pass one of them")
                                .c_str());
    }
    return model.layer_types.front().config;
  }
};

struct Table {
  std::shared_ptr<const RopeTable> table;
};

Frequencies ToFrequencies(double base, const std::optional<Doubles>& inv_freq,
                          double attention_factor) {
  Frequencies f;
  f.base = base;
  if (inv_freq) {
    f.inv_freq = inv_freq->data();
    f.inv_freq_len = static_cast<int64_t>(inv_freq->shape(0));
  }
  f.attention_factor = attention_factor;
  return f;
}

// ---------------------------------------------------------------- RoPE
// The RopeParams of python/posenc/_args.py's converted arguments, positions aside. inv_freq and
// the cache arrays are pointed to, not copied: they must outlive the call (RopeCall::Create copies
// inv_freq).
RopeParams ToRopeParams(int pairs, int64_t rotary_dim, bool inverse, double base,
                        const std::optional<Doubles>& inv_freq, double attention_factor,
                        const ArrayBuffer& cos, const ArrayBuffer& sin,
                        const std::string& cache_dtype, bool cache_per_token, const Table* table,
                        int arithmetic, int threads) {
  RopeParams p;
  p.pairs = static_cast<PairLayout>(pairs);
  p.arithmetic = static_cast<RotationArithmetic>(arithmetic);
  p.rotary_dim = rotary_dim;
  p.inverse = inverse;
  p.freqs = ToFrequencies(base, inv_freq, attention_factor);
  p.exec.max_threads = threads;
  if (cos && sin) {
    CosSinCache c;
    c.dtype = ParseDType(cache_dtype);
    CheckItemSize(cos, c.dtype, "cos");
    CheckItemSize(sin, c.dtype, "sin");
    c.kind = cache_per_token ? CosSinCache::Kind::kPerToken : CosSinCache::Kind::kByPosition;
    c.cos = cos.data();
    c.sin = sin.data();
    c.rows = static_cast<int64_t>(cos.shape(0));
    p.source = CosSinSource::Cache(c);
  } else if (table != nullptr) {
    p.source = CosSinSource::Table(table->table.get());
  }
  return p;
}

// mode: "kernel" (posenc::ApplyRope), "reference" (reference::ApplyRope, same outputs' dtype) or
// "reference_f64" (reference::ApplyRopeF64 into q_out / k_out, contiguous float64).
void Rope(nb::handle q_obj, nb::handle k_obj, nb::handle q_out_obj, nb::handle k_out_obj,
          const std::string& dtype_name, const std::string& mode, int pairs, int64_t rotary_dim,
          bool inverse, double base, const std::optional<Doubles>& inv_freq,
          double attention_factor, const std::optional<Ints>& ids,
          const std::optional<Ints>& batch_offsets, int64_t offset, nb::handle cos_obj,
          nb::handle sin_obj, const std::string& cache_dtype, bool cache_per_token,
          const Table* table, const ModelConfig* config,
          const std::optional<std::string>& layer_type, int arithmetic, int threads) {
  const DType dtype = ParseDType(dtype_name);
  const ArrayBuffer q(q_obj, false), k(k_obj, false);
  const ArrayBuffer q_out(q_out_obj, true), k_out(k_out_obj, true);
  const ArrayBuffer cos(cos_obj, false), sin(sin_obj, false);
  RopeTensors t;
  if (q) t.q = ToTensor(q, dtype, "q");
  if (k) t.k = ToTensor(k, dtype, "k");
  const bool f64 = mode == "reference_f64";
  if (mode != "kernel" && mode != "reference" && !f64) {
    throw nb::value_error(
        ("mode = \"" + mode + "\": must be kernel, reference or reference_f64").c_str());
  }
  if (f64) {  // q_out / k_out: contiguous float64, one per input element (python/posenc/_args.py)
    auto check = [](const ArrayBuffer& out, const ArrayBuffer& in) {
      if (out && (!out.is_float64() || !in || out.size() != in.size())) {
        throw nb::value_error("reference_f64 outputs must be float64 arrays of the inputs' size");
      }
    };
    check(q_out, q);
    check(k_out, k);
  } else {
    if (q_out) t.q_out = ToTensor(q_out, dtype, "out_q");
    if (k_out) t.k_out = ToTensor(k_out, dtype, "out_k");
  }
  RopeParams p = ToRopeParams(pairs, rotary_dim, inverse, base, inv_freq, attention_factor, cos,
                              sin, cache_dtype, cache_per_token, table, arithmetic, threads);
  p.positions = ToPositions(ids, batch_offsets, offset);
  const RopeConfig* rope_config = config ? &config->ForLayerType(layer_type) : nullptr;
  Status st;
  {
    nb::gil_scoped_release release;
    if (mode == "kernel") {
      st = rope_config ? ApplyRope(t, *rope_config, p) : ApplyRope(t, p);
    } else if (mode == "reference") {
      st = reference::ApplyRope(t, p);
    } else {
      st = reference::ApplyRopeF64(t, p, q_out ? static_cast<double*>(q_out.data()) : nullptr,
                                   k_out ? static_cast<double*>(k_out.data()) : nullptr);
    }
  }
  Check(st);
}

// posenc.RopeCall's core: a posenc::RopeCall over arrays this object holds, with the arguments of
// `rope` (mode "kernel", no config) checked once. The buffer exports keep the arrays alive and
// stop numpy from reallocating them (ndarray.resize refuses while a buffer is exported), so the
// RopeCall's pointers stay valid for this object's life. Apply releases the GIL under a mutex:
// two Python threads calling one RopeCall take turns, where two concurrent posenc::RopeCall::Apply
// calls would race on the outputs.
class PreparedRope {
 public:
  PreparedRope(nb::handle q_obj, nb::handle k_obj, nb::handle q_out_obj, nb::handle k_out_obj,
               const std::string& dtype_name, int pairs, int64_t rotary_dim, bool inverse,
               double base, const std::optional<Doubles>& inv_freq, double attention_factor,
               nb::handle cos_obj, nb::handle sin_obj, const std::string& cache_dtype,
               bool cache_per_token, const Table* table, int arithmetic, int threads)
      : q_(q_obj, false),
        k_(k_obj, false),
        q_out_(q_out_obj, true),
        k_out_(k_out_obj, true),
        cos_(cos_obj, false),
        sin_(sin_obj, false) {
    const DType dtype = ParseDType(dtype_name);
    RopeTensors t;
    if (q_) t.q = ToTensor(q_, dtype, "q");
    if (k_) t.k = ToTensor(k_, dtype, "k");
    if (q_out_) t.q_out = ToTensor(q_out_, dtype, "out_q");
    if (k_out_) t.k_out = ToTensor(k_out_, dtype, "out_k");
    RopeParams p = ToRopeParams(pairs, rotary_dim, inverse, base, inv_freq, attention_factor,
                                cos_, sin_, cache_dtype, cache_per_token, table, arithmetic,
                                threads);
    if (table != nullptr) table_ = table->table;
    Status st;
    {
      nb::gil_scoped_release release;
      st = RopeCall::Create(t, p, &call_);
    }
    Check(st);
  }

  void Apply(const std::optional<Ints>& ids, const std::optional<Ints>& batch_offsets,
             int64_t offset) {
    const Positions positions = ToPositions(ids, batch_offsets, offset);
    Status st;
    {
      nb::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      st = call_->Apply(positions);
    }
    Check(st);
  }

 private:
  const ArrayBuffer q_, k_, q_out_, k_out_, cos_, sin_;
  std::shared_ptr<const RopeTable> table_;  // the RopeCall points into it
  std::unique_ptr<RopeCall> call_;
  std::mutex mutex_;
};

// ---------------------------------------------------------------- sinusoidal
SinusoidalParams ToSinusoidalParams(int layout, int spacing, double base, int64_t position_offset,
                                    double x_scale, const std::optional<Ints>& ids,
                                    const std::optional<Ints>& batch_offsets, int64_t offset,
                                    int threads) {
  SinusoidalParams p;
  p.layout = static_cast<SinusoidalLayout>(layout);
  p.spacing = static_cast<FrequencySpacing>(spacing);
  p.base = base;
  p.position_offset = position_offset;
  p.x_scale = x_scale;
  p.positions = ToPositions(ids, batch_offsets, offset);
  p.exec.max_threads = threads;
  return p;
}

void WriteSinusoidalTo(const OutArray& out, const std::string& dtype_name, int layout, int spacing,
                       double base, int64_t position_offset, const std::optional<Ints>& ids,
                       const std::optional<Ints>& batch_offsets, int64_t offset, int threads) {
  const EmbeddingView view = ToEmbedding(out, ParseDType(dtype_name), "out");
  const SinusoidalParams p = ToSinusoidalParams(layout, spacing, base, position_offset, 1.0, ids,
                                                batch_offsets, offset, threads);
  Status st;
  {
    nb::gil_scoped_release release;
    st = WriteSinusoidal(p, view);
  }
  Check(st);
}

void AddSinusoidalTo(const InArray& x, const OutArray& out, const std::string& dtype_name,
                     int layout, int spacing, double base, int64_t position_offset, double x_scale,
                     const std::optional<Ints>& ids, const std::optional<Ints>& batch_offsets,
                     int64_t offset, int threads) {
  const DType dtype = ParseDType(dtype_name);
  const EmbeddingView xv = ToEmbedding(x, dtype, "x");
  const EmbeddingView ov = ToEmbedding(out, dtype, "out");
  const SinusoidalParams p = ToSinusoidalParams(layout, spacing, base, position_offset, x_scale,
                                                ids, batch_offsets, offset, threads);
  Status st;
  {
    nb::gil_scoped_release release;
    st = AddSinusoidal(p, xv, &ov);
  }
  Check(st);
}

// ---------------------------------------------------------------- module
nb::dict Info() {
  nb::dict d;
  d["version"] = Version();
  d["compiled_targets"] = CompiledTargets();
  d["supported_targets"] = SupportedTargets();
  d["chosen_target"] = ChosenTarget();
  const Status env = TargetEnvironmentStatus();
  d["target_environment"] = env.ok() ? std::string() : env.message();
  return d;
}

// A read-only numpy view of `rows` x `cols` floats owned by the table.
nb::ndarray<nb::numpy, const float, nb::ndim<2>> TableRows(const Table& t, bool cos) {
  const RopeTable& rt = *t.table;
  const float* data = cos ? rt.cos_row(0) : rt.sin_row(0);
  // The capsule holds a reference to the table, so the view outlives the Python RopeTable.
  auto* keep = new std::shared_ptr<const RopeTable>(t.table);
  nb::capsule owner(keep, [](void* p) noexcept {
    delete static_cast<std::shared_ptr<const RopeTable>*>(p);
  });
  const size_t shape[2] = {static_cast<size_t>(rt.max_positions()),
                           static_cast<size_t>(rt.rotary_dim() / 2)};
  return nb::ndarray<nb::numpy, const float, nb::ndim<2>>(data, 2, shape, owner);
}

}  // namespace
}  // namespace python
}  // namespace posenc

NB_MODULE(_posenc, m) {
  using namespace posenc;
  using namespace posenc::python;
  m.doc() = "posenc C++ core (use the posenc package, not this module)";

  // The scalar properties describe the RoPE shared by every layer type; for a model with several
  // (Gemma 3, OLMo 3) they describe the first (see layer_types, frequencies(config, L, type)).
  nb::class_<ModelConfig>(m, "RopeConfig",
                          "The RoPE of a model config (posenc.load_hf_config).")
      .def_prop_ro("rope_type",
                   [](const ModelConfig& c) { return RopeTypeName(c.model.layer_types.front().config.rope_type); })
      .def_prop_ro("rope_theta", [](const ModelConfig& c) { return c.model.layer_types.front().config.rope_theta; })
      .def_prop_ro("head_dim", [](const ModelConfig& c) { return c.model.layer_types.front().config.head_dim; })
      .def_prop_ro("partial_rotary_factor",
                   [](const ModelConfig& c) { return c.model.layer_types.front().config.partial_rotary_factor; })
      .def_prop_ro("num_attention_heads",
                   [](const ModelConfig& c) { return c.model.layer_types.front().config.num_attention_heads; })
      .def_prop_ro("num_key_value_heads",
                   [](const ModelConfig& c) { return c.model.layer_types.front().config.num_key_value_heads; })
      .def_prop_ro("max_position_embeddings",
                   [](const ModelConfig& c) { return c.model.layer_types.front().config.max_position_embeddings; })
      .def_prop_ro("original_max_position_embeddings",
                   [](const ModelConfig& c) { return c.model.layer_types.front().config.original_max_position_embeddings; })
      .def_prop_ro("factor", [](const ModelConfig& c) { return c.model.layer_types.front().config.factor; })
      .def_prop_ro("pairs",
                   [](const ModelConfig& c) {
                     return PairLayoutName(c.model.layer_types.front().config.pairs);
                   })
      .def_prop_ro("layer_types", &ModelConfig::LayerTypes,
                   "The model's distinct RoPE layer type names, in the order layers use them.")
      .def_prop_ro("layers",
                   [](const ModelConfig& c) {
                     std::vector<std::optional<std::string>> per_layer;
                     for (int t : c.model.layers) {
                       per_layer.push_back(t == ModelRope::kNoRope
                                               ? std::nullopt
                                               : std::optional<std::string>(
                                                     c.model.layer_types[t].name));
                     }
                     return per_layer;
                   },
                   "Per decoder layer: its RoPE layer type, or None for a layer without RoPE.")
      .def_prop_ro("softmax_scale_factor",
                   [](const ModelConfig& c) { return c.model.softmax_scale_factor; });

  m.def("load_hf_config", [](const std::string& path) {
    ModelConfig c;
    Check(LoadHfModel(path, &c.model));
    return c;
  }, "path"_a);
  m.def("parse_hf_config", [](const std::string& text) {
    ModelConfig c;
    Check(ParseHfModel(text, &c.model));
    return c;
  }, "text"_a);
  m.def("frequencies", [](const ModelConfig& c, int64_t seq_len,
                          const std::optional<std::string>& layer_type) {
    const RopeConfig& config = c.ForLayerType(layer_type);
    RopeFrequencies f;
    Check(ComputeFrequencies(config, seq_len, &f));
    return nb::make_tuple(RopeTypeName(f.rope_type), f.head_dim, f.rotary_dim, f.inv_freq,
                          f.attention_factor, PairLayoutName(config.pairs));
  }, "config"_a, "seq_len"_a, "layer_type"_a.none());

  nb::class_<Table>(m, "RopeTable")
      .def_prop_ro("rotary_dim", [](const Table& t) { return t.table->rotary_dim(); })
      .def_prop_ro("max_positions", [](const Table& t) { return t.table->max_positions(); })
      .def_prop_ro("attention_factor", [](const Table& t) { return t.table->attention_factor(); })
      .def_prop_ro("inv_freq", [](const Table& t) { return t.table->inv_freq(); })
      .def_prop_ro("cos", [](const Table& t) { return TableRows(t, true); }, nb::rv_policy::move,
                   "[max_positions, rotary_dim / 2] float32, read only (attention factor included)")
      .def_prop_ro("sin", [](const Table& t) { return TableRows(t, false); }, nb::rv_policy::move,
                   "[max_positions, rotary_dim / 2] float32 (attention factor included)");
  m.def("create_table", [](int64_t rotary_dim, int64_t max_positions, double base,
                           const std::optional<Doubles>& inv_freq, double attention_factor,
                           int arithmetic) {
    const Frequencies f = ToFrequencies(base, inv_freq, attention_factor);
    Table t;
    Status st;
    {
      nb::gil_scoped_release release;
      st = RopeTable::Create(rotary_dim, f, max_positions,
                             static_cast<RotationArithmetic>(arithmetic), &t.table);
    }
    Check(st);
    return t;
  }, "rotary_dim"_a, "max_positions"_a, "base"_a, "inv_freq"_a.none(), "attention_factor"_a,
     "arithmetic"_a);

  m.def("rope", &Rope, "q"_a.none(), "k"_a.none(), "q_out"_a.none(), "k_out"_a.none(), "dtype"_a,
        "mode"_a, "pairs"_a, "rotary_dim"_a, "inverse"_a, "base"_a, "inv_freq"_a.none(),
        "attention_factor"_a, "ids"_a.none(), "batch_offsets"_a.none(), "offset"_a,
        "cos"_a.none(), "sin"_a.none(), "cache_dtype"_a, "cache_per_token"_a, "table"_a.none(),
        "config"_a.none(), "layer_type"_a.none(), "arithmetic"_a, "threads"_a);
  nb::class_<PreparedRope>(m, "PreparedRope")
      .def(nb::init<nb::handle, nb::handle, nb::handle, nb::handle, const std::string&, int,
                    int64_t, bool, double, const std::optional<Doubles>&, double, nb::handle,
                    nb::handle, const std::string&, bool, const Table*, int, int>(),
           "q"_a.none(), "k"_a.none(), "q_out"_a.none(), "k_out"_a.none(), "dtype"_a, "pairs"_a,
           "rotary_dim"_a, "inverse"_a, "base"_a, "inv_freq"_a.none(), "attention_factor"_a,
           "cos"_a.none(), "sin"_a.none(), "cache_dtype"_a, "cache_per_token"_a,
           "table"_a.none(), "arithmetic"_a, "threads"_a)
      .def("apply", &PreparedRope::Apply, "ids"_a.none(), "batch_offsets"_a.none(), "offset"_a);
  m.def("write_sinusoidal", &WriteSinusoidalTo, "out"_a, "dtype"_a, "layout"_a, "spacing"_a,
        "base"_a, "position_offset"_a, "ids"_a.none(), "batch_offsets"_a.none(), "offset"_a,
        "threads"_a);
  m.def("add_sinusoidal", &AddSinusoidalTo, "x"_a, "out"_a, "dtype"_a, "layout"_a, "spacing"_a,
        "base"_a, "position_offset"_a, "x_scale"_a, "ids"_a.none(), "batch_offsets"_a.none(),
        "offset"_a, "threads"_a);
  m.def("info", &Info);
  m.def("set_max_target", [](const std::string& name) { Check(SetMaxTarget(name)); }, "name"_a);
}

