// posenc sinusoidal: writes a float32 [N, D] table of sinusoidal position encodings.
#include <memory>
#include <string>
#include <vector>

#include "posenc/sinusoidal.h"
#include "tools/posenc/cli.h"
#include "tools/posenc/npy.h"

namespace posenc {
namespace cli {
namespace {

// The largest table the tool writes (8 GiB of f32): a documented limit instead of an attempt to
// allocate whatever --count x --dim asks for.
constexpr int64_t kMaxOutputElements = int64_t{1} << 31;

struct SinusoidalArgs {
  int64_t dim = 0, count = 0, start = 0, offset = 0;
  std::string positions, convention = "interleaved", spacing = "paper", out, dtype = "f32";
  double base = 10000.0;
};

void RunSinusoidal(const SinusoidalArgs& args) {
  SinusoidalParams p;
  p.layout = args.convention == "concat_sin_cos"   ? SinusoidalLayout::kConcatSinCos
             : args.convention == "concat_cos_sin" ? SinusoidalLayout::kConcatCosSin
                                                   : SinusoidalLayout::kInterleaved;
  p.spacing = args.spacing == "t2t" ? FrequencySpacing::kTensor2Tensor : FrequencySpacing::kPaper;
  p.base = args.base;
  p.position_offset = args.offset;
  std::vector<int64_t> ids;
  int64_t n = args.count;
  if (!args.positions.empty()) {
    npy::Array a;
    const std::string err = npy::Load(args.positions, &a);
    if (!err.empty()) throw UsageError("--positions " + err);
    if ((a.descr != "<i4" && a.descr != "<i8") || a.shape.size() != 1) {
      throw UsageError("--positions " + args.positions + ": must be a 1-D int32/int64 array, got '" +
                       a.descr + "' with " + std::to_string(a.shape.size()) + " dims");
    }
    ids = npy::ToInt64(a);
    n = static_cast<int64_t>(ids.size());
    p.positions = Positions::Ids(ids.data());
  } else {
    p.positions = Positions::Offset(args.start);
  }
  if (n <= 0) throw UsageError("--count = " + std::to_string(n) + ": must be > 0");
  if (args.dim <= 0 || args.dim % 2 != 0) {
    throw UsageError("--dim = " + std::to_string(args.dim) + ": must be even and > 0");
  }
  int64_t elements;
  if (__builtin_mul_overflow(n, args.dim, &elements) || elements > kMaxOutputElements) {
    throw UsageError("--count/--positions N = " + std::to_string(n) + " x --dim = " +
                     std::to_string(args.dim) + ": the table may hold at most 2^31 elements");
  }
  const DType dtype = args.dtype == "bf16" ? DType::kBF16 : args.dtype == "f16" ? DType::kF16 : DType::kF32;
  const char* descr = dtype == DType::kBF16 ? "<u2" : dtype == DType::kF16 ? "<f2" : "<f4";
  npy::Array out{descr, {n, args.dim},
                 std::vector<unsigned char>(static_cast<size_t>(elements) * DTypeSize(dtype))};
  const Status st = WriteSinusoidal(p, EmbeddingBSD(out.bytes.data(), dtype, 1, n, args.dim));
  if (!st.ok()) throw UsageError(st.message());
  const std::string err = npy::Save(args.out, out);
  if (!err.empty()) throw std::runtime_error(err);
}

}  // namespace

void AddSinusoidal(CLI::App& app) {
  auto args = std::make_shared<SinusoidalArgs>();
  CLI::App* cmd = app.add_subcommand("sinusoidal", "Write an [N, D] sinusoidal PE table (.npy)");
  cmd->add_option("--dtype", args->dtype, "f32 ('<f4'), bf16 ('<u2' bit patterns) or f16 ('<f2')")
      ->check(CLI::IsMember({"f32", "bf16", "f16"}));
  cmd->add_option("--dim", args->dim, "d_model (even)")->required();
  CLI::Option* count = cmd->add_option("--count", args->count, "number of positions N");
  CLI::Option* start = cmd->add_option("--start", args->start, "first position (default 0)");
  CLI::Option* pos = cmd->add_option("--positions", args->positions, "1-D int32/int64 positions (.npy)");
  cmd->add_option("--convention", args->convention, "interleaved, concat_sin_cos or concat_cos_sin")
      ->check(CLI::IsMember({"interleaved", "concat_sin_cos", "concat_cos_sin"}));
  cmd->add_option("--spacing", args->spacing, "paper (base^(-2i/d)) or t2t (ln(base)/(d/2-1) steps)")
      ->check(CLI::IsMember({"paper", "t2t"}));
  cmd->add_option("--base", args->base, "base (default 10000)");
  cmd->add_option("--offset", args->offset, "added to every position (fairseq: padding_idx + 1)");
  cmd->add_option("--out", args->out, "output .npy")->required();
  count->excludes(pos);
  start->excludes(pos);
  start->needs(count);
  cmd->callback([args, count, pos] {
    if (count->count() == 0 && pos->count() == 0) throw UsageError("give --count N or --positions FILE");
    RunSinusoidal(*args);
  });
}

}  // namespace cli
}  // namespace posenc
