// posenc::ApplyVisionRope (posenc/vision.h): 2-D vision RoPE as a two-stream M-RoPE call.
#include "posenc/vision.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "lib/core/guard.h"
#include "lib/api/rope_prepare.h"
#include "lib/api/tensor_checks.h"
#include "lib/freqs/inv_freq.h"
#include "posenc/rope.h"

namespace posenc {
namespace {

Status CheckKind(VisionRopeKind kind) {
  if (kind != VisionRopeKind::kQwenVL && kind != VisionRopeKind::kPixtral &&
      kind != VisionRopeKind::kLlama4) {
    return api::Err(StatusCode::kInvalidArgument, "kind = ", static_cast<int>(kind),
                    ": not a VisionRopeKind");
  }
  return Status::Ok();
}

Status PairFrequencies(VisionRopeKind kind, int64_t head_dim, double theta,
                       std::vector<double>* out) {
  Status st = CheckKind(kind);
  if (!st.ok()) return st;
  if (head_dim <= 0 || head_dim % 4 != 0 || head_dim > 65536) {
    return api::Err(
        StatusCode::kInvalidArgument, "head_dim = ", head_dim,
        ": must be a positive multiple of 4 (two halves of head_dim / 4 pairs), <= 65536");
  }
  if (!std::isfinite(theta) || !(theta > 0.0)) {
    return api::Err(StatusCode::kInvalidArgument, "theta = ", theta, ": must be finite and > 0");
  }
  const int64_t quarter = head_dim / 4;
  out->assign(static_cast<size_t>(2 * quarter), 0.0);
  if (kind == VisionRopeKind::kQwenVL || kind == VisionRopeKind::kLlama4) {
    // Qwen2_5_VisionRotaryEmbedding(dim = head_dim / 2): theta^(-2i / dim), i < dim / 2.
    // Llama4VisionRotaryEmbedding: freq_dim = head_dim / 2, theta^(-2i / freq_dim), i < d / 4:
    // the same values, shared by the column (first) and row (second) halves.
    const std::vector<double> w = freqs::DefaultInvFreq(theta, head_dim / 2);
    for (int64_t i = 0; i < quarter; ++i) (*out)[i] = (*out)[quarter + i] = w[i];
  } else {
    // PixtralRotaryEmbedding: f_j = theta^(-2j / head_dim); rows take f[::2], cols f[1::2].
    const std::vector<double> f = freqs::DefaultInvFreq(theta, head_dim);
    for (int64_t i = 0; i < quarter; ++i) {
      (*out)[i] = f[2 * i];
      (*out)[quarter + i] = f[2 * i + 1];
    }
  }
  for (double v : *out) {
    if (!std::isfinite(v)) {
      return api::Err(StatusCode::kInvalidArgument, "theta = ", theta,
                      ": gives a frequency that is not finite");
    }
  }
  return Status::Ok();
}

template <class Apply>
Status Vision(const RopeTensors& t, const VisionRopeParams& vp, const Apply& apply) {
  Status st = api::CheckRopeTensors(t);
  if (!st.ok()) return st;
  const Tensor& shape = t.q.present() ? t.q : t.k;
  const int64_t batch = shape.shape[0], patches = shape.shape[1], head_dim = shape.shape[3];
  std::vector<double> inv_freq;
  if (!(st = PairFrequencies(vp.kind, head_dim, vp.theta, &inv_freq)).ok()) return st;
  if (vp.arithmetic == RotationArithmetic::kFmaChain) {
    return api::Err(StatusCode::kInvalidArgument,
                    "arithmetic = kFmaChain: vision RoPE (M-RoPE sections) supports kF64 and kF32");
  }
  if ((vp.rows_cols64 == nullptr) == (vp.rows_cols32 == nullptr)) {
    return api::Err(StatusCode::kInvalidArgument,
                    "rows_cols64 and rows_cols32: exactly one must be set");
  }
  if (vp.rows_cols64 != nullptr && !(st = api::CheckAligned(vp.rows_cols64, 8, "rows_cols64")).ok())
    return st;
  if (vp.rows_cols32 != nullptr && !(st = api::CheckAligned(vp.rows_cols32, 4, "rows_cols32")).ok())
    return st;
  // The one read of the caller's positions: [batch, patches, 2] -> streams [2, batch, patches]
  // (kLlama4: (col + 1, row + 1), so that the CLS token (-1, -1) gets angle 0).
  const int64_t n = batch * patches;
  const bool llama4 = vp.kind == VisionRopeKind::kLlama4;
  std::vector<int64_t> streams(static_cast<size_t>(2 * n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t rc[2];
    for (int64_t a = 0; a < 2; ++a) {
      rc[a] = vp.rows_cols64 != nullptr ? vp.rows_cols64[2 * i + a] : vp.rows_cols32[2 * i + a];
    }
    if (llama4) {
      const bool cls = rc[0] == kVisionClsPosition && rc[1] == kVisionClsPosition;
      // 2^50: the largest angle posenc reduces, with w_0 = 1 (also keeps + 1 from overflowing).
      const int64_t kMaxLlama4 = (int64_t{1} << 50) - 1;
      if (!cls && (rc[0] < 0 || rc[1] < 0 || rc[0] > kMaxLlama4 || rc[1] > kMaxLlama4)) {
        return api::Err(StatusCode::kInvalidArgument,
                        vp.rows_cols64 != nullptr ? "rows_cols64[" : "rows_cols32[", i / patches,
                        ", ", i % patches, "] = (", rc[0], ", ", rc[1],
                        "): kLlama4 takes row, col in [0, 2^50 - 1], or (-1, -1) (the CLS token)");
      }
      streams[static_cast<size_t>(i)] = rc[1] + 1;
      streams[static_cast<size_t>(n + i)] = rc[0] + 1;
    } else {
      streams[static_cast<size_t>(i)] = rc[0];
      streams[static_cast<size_t>(n + i)] = rc[1];
    }
  }
  // The caller's (row, col) buffer must not share memory with an output.
  const void* ids = vp.rows_cols64 != nullptr ? static_cast<const void*>(vp.rows_cols64)
                                              : static_cast<const void*>(vp.rows_cols32);
  const uint64_t bytes = static_cast<uint64_t>(2 * n) * (vp.rows_cols64 != nullptr ? 8 : 4);
  for (const Tensor* o :
       {t.q_out.present() ? &t.q_out : &t.q, t.k_out.present() ? &t.k_out : &t.k}) {
    if (o->present() && api::ViewOverlapsBytes(*o, ids, bytes)) {
      return api::Err(StatusCode::kInvalidArgument, vp.rows_cols64 ? "rows_cols64" : "rows_cols32",
                      " overlaps an output: an input must not share memory with an output");
    }
  }
  const int64_t section[2] = {head_dim / 4, head_dim / 4};
  RopeParams p;
  // HF rotate_half for the Qwen-VL towers and Pixtral; Llama 4's view_as_complex of
  // reshape(..., -1, 2) pairs neighbours.
  p.pairs = llama4 ? PairLayout::kInterleaved : PairLayout::kHalf;
  p.arithmetic = vp.arithmetic;
  p.inverse = vp.inverse;
  p.exec = vp.exec;
  p.freqs.inv_freq = inv_freq.data();
  p.freqs.inv_freq_len = static_cast<int64_t>(inv_freq.size());
  p.mrope = {section, 2, false};
  p.positions = Positions::StreamIds(static_cast<const int64_t*>(streams.data()), 2);
  st = apply(t, p);
  if (st.ok()) return st;
  // Name the streams as the caller gave them.
  std::string m = st.message();
  for (const char* from : {"stream 0 of positions", "stream 1 of positions"}) {
    const size_t at = m.find(from);
    if (at != std::string::npos)
      m.replace(at, std::string(from).size(),
                (from[7] == '0') != llama4 ? "rows of rows_cols" : "cols of rows_cols");
  }
  return Status(st.code(), m);
}

}  // namespace

Status VisionRopeFrequencies(VisionRopeKind kind, int64_t head_dim, double theta,
                             std::vector<double>* inv_freq) {
  return api::Guarded("posenc::VisionRopeFrequencies", [&] {
    if (inv_freq == nullptr) return api::Err(StatusCode::kInvalidArgument, "inv_freq is null");
    std::vector<double> f;
    Status st = PairFrequencies(kind, head_dim, theta, &f);
    if (st.ok()) *inv_freq = std::move(f);
    return st;
  });
}

Status VisionGridPositions(VisionRopeKind kind, int64_t t, int64_t h, int64_t w, int64_t merge,
                           std::vector<int64_t>* rows_cols) {
  return api::Guarded("posenc::VisionGridPositions", [&] {
    Status st = CheckKind(kind);
    if (!st.ok()) return st;
    if (rows_cols == nullptr) return api::Err(StatusCode::kInvalidArgument, "rows_cols is null");
    if (t <= 0 || h <= 0 || w <= 0 || t > (1 << 20) || h > (1 << 20) || w > (1 << 20) ||
        t * h * w > (int64_t{1} << 32)) {
      return api::Err(StatusCode::kInvalidArgument, "grid (t, h, w) = (", t, ", ", h, ", ", w,
                      "): each must be in [1, 2^20] and t * h * w <= 2^32");
    }
    if (kind != VisionRopeKind::kQwenVL && (t != 1 || merge != 1)) {
      return api::Err(StatusCode::kInvalidArgument,
                      kind == VisionRopeKind::kPixtral ? "kPixtral" : "kLlama4", ": t = ", t,
                      ", spatial_merge_size = ", merge,
                      ": must be 1 and 1 (one image, row-major patches)");
    }
    if (merge <= 0 || h % merge != 0 || w % merge != 0) {
      return api::Err(StatusCode::kInvalidArgument, "spatial_merge_size = ", merge,
                      ": must be > 0 and divide h = ", h, " and w = ", w);
    }
    std::vector<int64_t> out;
    out.reserve(static_cast<size_t>(2 * t * h * w));
    for (int64_t frame = 0; frame < t; ++frame)
      for (int64_t bh = 0; bh < h / merge; ++bh)
        for (int64_t bw = 0; bw < w / merge; ++bw)
          for (int64_t ih = 0; ih < merge; ++ih)
            for (int64_t iw = 0; iw < merge; ++iw) {
              out.push_back(bh * merge + ih);
              out.push_back(bw * merge + iw);
            }
    if (kind == VisionRopeKind::kLlama4) {  // HF appends the CLS token after the patches
      out.push_back(kVisionClsPosition);
      out.push_back(kVisionClsPosition);
    }
    *rows_cols = std::move(out);
    return Status::Ok();
  });
}

Status VisionWindowedGridPositions(int64_t t, int64_t h, int64_t w, int64_t merge,
                                   int64_t window_size, int64_t patch_size,
                                   VisionWindowOrder* out) {
  return api::Guarded("posenc::VisionWindowedGridPositions", [&] {
    if (out == nullptr) return api::Err(StatusCode::kInvalidArgument, "out is null");
    std::vector<int64_t> grid;  // rot_pos_emb's order; validates t, h, w and merge
    Status st = VisionGridPositions(VisionRopeKind::kQwenVL, t, h, w, merge, &grid);
    if (!st.ok()) return st;
    if (patch_size <= 0 || patch_size > (1 << 20)) {
      return api::Err(StatusCode::kInvalidArgument, "patch_size = ", patch_size,
                      ": must be in [1, 2^20]");
    }
    if (window_size <= 0 || window_size > (1 << 30)) {
      return api::Err(StatusCode::kInvalidArgument, "window_size = ", window_size,
                      ": must be in [1, 2^30]");
    }
    const int64_t win = window_size / merge / patch_size;  // HF vit_merger_window_size
    if (win < 1) {
      return api::Err(StatusCode::kInvalidArgument, "window_size = ", window_size,
                      ": window_size / spatial_merge_size / patch_size = ", window_size, " / ",
                      merge, " / ", patch_size, " is 0; it must be >= 1");
    }
    const int64_t unit = merge * merge, gh = h / merge, gw = w / merge;
    // get_window_index: pad the unit grid to whole windows (HF pads a full extra window when the
    // side is already a multiple; those windows are empty and dropped by unique_consecutive),
    // then walk frames, window rows, window cols, and row-major inside a window.
    const int64_t nwh = (gh + win - gh % win) / win, nww = (gw + win - gw % win) / win;
    VisionWindowOrder o;
    o.window_index.reserve(static_cast<size_t>(t * gh * gw));
    o.cu_window_seqlens.push_back(0);
    for (int64_t f = 0; f < t; ++f)
      for (int64_t wy = 0; wy < nwh; ++wy)
        for (int64_t wx = 0; wx < nww; ++wx) {
          int64_t count = 0;
          for (int64_t iy = wy * win; iy < std::min(gh, (wy + 1) * win); ++iy)
            for (int64_t ix = wx * win; ix < std::min(gw, (wx + 1) * win); ++ix) {
              o.window_index.push_back((f * gh + iy) * gw + ix);
              ++count;
            }
          if (count > 0) o.cu_window_seqlens.push_back(o.cu_window_seqlens.back() + count * unit);
        }
    o.rows_cols.reserve(grid.size());
    for (int64_t u : o.window_index) {  // rot_pos_emb[window_index] at merge-unit granularity
      const auto from = grid.begin() + static_cast<std::ptrdiff_t>(2 * unit * u);
      o.rows_cols.insert(o.rows_cols.end(), from, from + 2 * unit);
    }
    *out = std::move(o);
    return Status::Ok();
  });
}

Status ApplyVisionRope(const RopeTensors& tensors, const VisionRopeParams& params) {
  return api::Guarded("posenc::ApplyVisionRope", [&] {
    return Vision(tensors, params,
                  [](const RopeTensors& t, const RopeParams& p) { return ApplyRope(t, p); });
  });
}

namespace reference {
Status ApplyVisionRope(const RopeTensors& tensors, const VisionRopeParams& params) {
  return api::Guarded("posenc::reference::ApplyVisionRope", [&] {
    return Vision(tensors, params, [](const RopeTensors& t, const RopeParams& p) {
      return reference::ApplyRope(t, p);
    });
  });
}
}  // namespace reference

}  // namespace posenc
