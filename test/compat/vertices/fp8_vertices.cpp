// Copyright (c) Aspen contributors.
// A codelet written as fp8 codelets are (issue 15 item 5): `quarter` through
// Vertex.hpp, the metadata of quarter edges through getMetadata(), unpacked with
// unpackMetadata, values made with toQuarter.
#include <poplar/Vertex.hpp>

using namespace poplar;

// PopLibs' codelets define their own unpacking of the pointer getMetadata() returns
// (lib/poplin/codelets/convCastSupport.hpp); it must not clash with Aspen's headers.
static quarter_metadata unpackMetadata(const MetadataType *in) {
  quarter_metadata out;
  out.fmt = (*in & 0x80) ? quarter_metadata::f143 : quarter_metadata::f152;
  out.scale = static_cast<signed char>(*in & 0x3f);
  if (out.scale & 0x20)
    out.scale = static_cast<signed char>(out.scale | 0xc0);
  return out;
}

// out[i] = in[i] * factor, re-encoded with out's metadata; also reports the
// unpacked metadata of both edges.
class QuarterScale : public Vertex {
public:
  Input<Vector<quarter>> in;
  Output<Vector<quarter, VectorLayout::ONE_PTR>> out;
  Input<quarter> first;
  Output<Vector<int, VectorLayout::ONE_PTR>> info; // {in fmt, in scale, out fmt, out scale, first bits}
  float factor;

  bool compute() {
    const quarter_metadata inMd = unpackMetadata(*in.getMetadata());
    const quarter_metadata outMd = unpackMetadata(*out.getMetadata());
    for (unsigned i = 0; i < in.size(); ++i)
      out[i] = toQuarter(toFloat(in[i], inMd) * factor, outMd);
    info[0] = inMd.fmt == quarter_metadata::f143 ? 143 : 152;
    info[1] = inMd.scale;
    info[2] = outMd.fmt == quarter_metadata::f143 ? 143 : 152;
    info[3] = outMd.scale;
    const quarter q = first;
    info[4] = q.value;
    return unpackMetadata(first.getMetadata()).scale == inMd.scale; // the pointer form above
  }
};

// A list of quarter edges with one metadata, as PopLibs' convolution vertices
// declare theirs: sum[r] = sum of the values of region r.
class QuarterRowSums : public Vertex {
public:
  Vector<Input<Vector<quarter, VectorLayout::ONE_PTR, 8>>, VectorLayout::ONE_PTR> in;
  Vector<Input<quarter>> firsts;
  Output<Vector<float>> sums;
  unsigned rowLength;

  void compute() {
    const quarter_metadata md = unpackMetadata(*in.getMetadata());
    for (unsigned r = 0; r < sums.size(); ++r) {
      float s = 0;
      for (unsigned i = 0; i < rowLength; ++i)
        s += toFloat(in[r][i], md);
      sums[r] = s + 0 * toFloat(firsts[r], unpackMetadata(*firsts.getMetadata()));
    }
  }
};
