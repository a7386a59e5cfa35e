// Copyright (c) Aspen contributors.
// Graph::serializeTensors / Graph::deserializeTensors: a set of tensors (types,
// shapes, tile mappings and the variable elements they view; no values) written
// to a stream and recreated in another graph. The binary form is a Cap'n Proto
// message laid out as Poplar's (reconstructed from a file Poplar wrote, see
// docs/graph-serialization.md); the JSON form is Aspen's document.
#include "ir/GraphData.hpp"
#include "ir/TensorAlgebra.hpp"
#include "poplar/Graph.hpp"
#include "poplar/exceptions.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <functional>
#include <istream>
#include <iterator>
#include <memory>
#include <numeric>
#include <ostream>
#include <unordered_map>

namespace poplar {

namespace {

using aspen::ir::GraphData;
using aspen::ir::Segment;
using aspen::ir::VarId;
using json = nlohmann::json;

// ---- the document, independent of its encoding ------------------------------

/// How a tensor views its variables. Kinds 0 and 2 are Poplar's (the values
/// seen in a file Poplar wrote); kRegions is Aspen's.
struct ViewExpr {
  static constexpr std::uint16_t kVariable = 0;   // the whole of one variable, in order
  static constexpr std::uint16_t kDimShuffle = 2; // input reshaped to inputShape, then dimShuffled
  static constexpr std::uint16_t kRegions = 100;  // strided runs of variables' elements (Aspen's)
  std::uint16_t kind = kVariable;
  std::uint64_t variable = 0;
  std::unique_ptr<ViewExpr> input;
  std::vector<std::uint64_t> permutation;
  std::vector<std::uint64_t> inputShape;
  struct Run {
    std::uint64_t var;
    std::int64_t start, stride;
    std::uint64_t count;
  };
  std::vector<Run> runs;
};

struct TensorRecord {
  Type type;
  std::vector<std::size_t> shape;
  std::vector<std::vector<Interval>> mapping; // per tile, intervals of the flattened tensor
  ViewExpr view;
};

struct VariableRecord {
  std::string name;
  Type type;
  std::uint64_t numElements = 0;
};

struct Document {
  std::vector<TensorRecord> tensors;
  std::vector<VariableRecord> variables;
};

[[noreturn]] void bad(const std::string &what) {
  throw parse_error("Graph::deserializeTensors: " + what);
}

// ---- element types ----------------------------------------------------------
// Poplar's numbering of element types is not published. 16 is the code of the one
// tensor in the one file Poplar wrote that we could read, and it is float: PopLibs' test
// reading that file (reduce_op_T59445) uploads its values into the tensor after casting
// it to reduce_op's default type, float, so it passes only when no cast is made. The
// other codes are Aspen's. Aspen also writes each type's name, which its reader prefers.

struct TypeCode {
  const Type *type;
  std::uint16_t code;
};

const TypeCode kTypeCodes[] = {
    {&BOOL, 1},
    {&CHAR, 2},
    {&SIGNED_CHAR, 3},
    {&UNSIGNED_CHAR, 4},
    {&SHORT, 5},
    {&UNSIGNED_SHORT, 6},
    {&INT, 7},
    {&UNSIGNED_INT, 8},
    {&LONG, 9},
    {&UNSIGNED_LONG, 10},
    {&LONGLONG, 11},
    {&UNSIGNED_LONGLONG, 12},
    {&DOUBLE, 13},
    {&QUARTER, 14},
    {&HALF, 15},
    {&FLOAT, 16},
    {&QUARTER_METADATA, 17},
};

std::uint16_t typeCode(const Type &t) {
  for (const auto &c : kTypeCodes)
    if (*c.type == t)
      return c.code;
  return 0xffff;
}

Type typeFromCode(std::uint64_t code, const std::string &where) {
  for (const auto &c : kTypeCodes)
    if (c.code == code)
      return *c.type;
  bad(where + " has element type code " + std::to_string(code) + ", which Aspen does not know");
}

Type typeFromName(const std::string &name, const std::string &where) {
  for (const auto &c : kTypeCodes)
    if (c.type->toString() == StringRef(name))
      return *c.type;
  bad(where + " has element type '" + name + "', which Aspen does not know");
}

// ---- Cap'n Proto: a minimal writer (one segment) and reader (any segments) ----

class CapnpWriter {
public:
  std::size_t alloc(std::size_t n) {
    const std::size_t at = words_.size();
    for (std::size_t i = 0; i < n; ++i) // (not resize: GCC 12 -O3 warns falsely on its fill)
      words_.push_back(0);
    return at;
  }
  std::uint64_t &operator[](std::size_t i) { return words_[i]; }

  /// Points the pointer word `ptr` at a struct of `ds` data and `pc` pointer words
  /// at `target`.
  void structPtr(std::size_t ptr, std::size_t target, unsigned ds, unsigned pc) {
    words_[ptr] = offsetBits(ptr, target) | (std::uint64_t(ds) << 32) | (std::uint64_t(pc) << 48);
  }
  /// Allocates a struct and points `ptr` at it; returns its first word.
  std::size_t newStruct(std::size_t ptr, unsigned ds, unsigned pc) {
    const std::size_t at = alloc(ds + pc);
    structPtr(ptr, at, ds, pc);
    return at;
  }
  /// A list of primitive elements of Cap'n Proto size code `sizeCode` (2: bytes,
  /// 4: 32-bit, 5: 64-bit, 6: pointers).
  std::size_t newList(std::size_t ptr, unsigned sizeCode, std::uint64_t count) {
    static const unsigned bits[] = {0, 1, 8, 16, 32, 64, 64};
    const std::size_t n = (count * bits[sizeCode] + 63) / 64;
    const std::size_t at = alloc(n);
    words_[ptr] = offsetBits(ptr, at) | 1 | (std::uint64_t(sizeCode) << 32) | (count << 35);
    return at;
  }
  /// A list of `count` structs of `ds` + `pc` words; returns the first element's word.
  std::size_t newStructList(std::size_t ptr, std::uint64_t count, unsigned ds, unsigned pc) {
    const std::size_t at = alloc(1 + count * (ds + pc));
    words_[ptr] = offsetBits(ptr, at) | 1 | (std::uint64_t(7) << 32) | ((count * (ds + pc)) << 35);
    words_[at] = (count << 2) | (std::uint64_t(ds) << 32) | (std::uint64_t(pc) << 48);
    return at + 1;
  }
  void text(std::size_t ptr, const std::string &s) {
    const std::size_t at = newList(ptr, 2, s.size() + 1);
    std::memcpy(reinterpret_cast<char *>(&words_[at]), s.data(), s.size());
  }
  void u64List(std::size_t ptr, const std::vector<std::uint64_t> &v) {
    const std::size_t at = newList(ptr, 5, v.size());
    std::copy(v.begin(), v.end(), words_.begin() + static_cast<std::ptrdiff_t>(at));
  }
  void u32List(std::size_t ptr, const std::vector<std::uint64_t> &v) {
    const std::size_t at = newList(ptr, 4, v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
      words_[at + i / 2] |= (v[i] & 0xffffffffu) << (32 * (i % 2));
  }

  /// The message with the standard stream framing (one segment).
  void write(std::ostream &out) const {
    const std::uint32_t header[2] = {0, static_cast<std::uint32_t>(words_.size())};
    out.write(reinterpret_cast<const char *>(header), sizeof header);
    out.write(reinterpret_cast<const char *>(words_.data()),
              static_cast<std::streamsize>(words_.size() * sizeof(std::uint64_t)));
  }

private:
  static std::uint64_t offsetBits(std::size_t ptr, std::size_t target) {
    const std::int64_t off = static_cast<std::int64_t>(target) - static_cast<std::int64_t>(ptr) - 1;
    return (static_cast<std::uint64_t>(off) & 0x3fffffffu) << 2;
  }
  std::vector<std::uint64_t> words_;
};

class CapnpReader {
public:
  struct Struct {
    std::uint32_t seg = 0;
    std::uint64_t at = 0;
    std::uint16_t ds = 0, pc = 0;
    bool null = true;
  };
  struct List {
    std::uint32_t seg = 0;
    std::uint64_t at = 0; // first element (after the tag of a struct list)
    unsigned sizeCode = 0;
    std::uint64_t count = 0;
    std::uint16_t ds = 0, pc = 0; // struct lists
    bool null = true;
  };

  explicit CapnpReader(std::istream &in) {
    std::uint32_t n = 0;
    if (!readRaw(in, &n, 4))
      bad("the stream is empty or cannot be read (no Cap'n Proto message header)");
    if (n >= 512)
      bad("the message header gives " + std::to_string(std::uint64_t(n) + 1) +
          " segments: not a Cap'n Proto message (a Poplar binary tensor file)");
    std::vector<std::uint32_t> sizes(n + 1);
    if (!readRaw(in, sizes.data(), sizes.size() * 4))
      bad("the stream ends inside the message header");
    if ((sizes.size() + 1) % 2)
      readRaw(in, &n, 4); // padding to a whole word
    std::uint64_t total = 0;
    for (auto s : sizes)
      total += s;
    if (total > (std::uint64_t(1) << 31))
      bad("the message header gives " + std::to_string(total) + " words: not a tensor file");
    segs_.resize(sizes.size());
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      segs_[i].resize(sizes[i]);
      if (!readRaw(in, segs_[i].data(), sizes[i] * 8ull))
        bad("the stream ends inside segment " + std::to_string(i) + " of the message (" +
            std::to_string(sizes[i]) + " words)");
    }
    if (segs_[0].empty())
      bad("the message has no root pointer");
  }

  Struct root() const { return structAt(0, 0, "the root"); }

  std::uint64_t dataWord(const Struct &s, unsigned i) const {
    return s.null || i >= s.ds ? 0 : segs_[s.seg][s.at + i];
  }
  Struct structField(const Struct &s, unsigned p, const std::string &what) const {
    if (s.null || p >= s.pc)
      return {};
    return structAt(s.seg, s.at + s.ds + p, what);
  }
  List listField(const Struct &s, unsigned p, const std::string &what) const {
    if (s.null || p >= s.pc)
      return {};
    return listAt(s.seg, s.at + s.ds + p, what);
  }
  Struct element(const List &l, std::uint64_t i) const {
    Struct s;
    s.seg = l.seg;
    s.at = l.at + i * (l.ds + l.pc);
    s.ds = l.ds;
    s.pc = l.pc;
    s.null = false;
    return s;
  }
  List listElement(const List &l, std::uint64_t i, const std::string &what) const {
    return listAt(l.seg, l.at + i, what);
  }
  std::vector<std::uint64_t> integers(const List &l, const std::string &what) const {
    std::vector<std::uint64_t> out;
    if (l.null)
      return out;
    if (l.sizeCode != 4 && l.sizeCode != 5)
      bad(what + " is not a list of integers (element size code " + std::to_string(l.sizeCode) + ")");
    out.reserve(l.count);
    for (std::uint64_t i = 0; i < l.count; ++i) {
      const std::uint64_t w = segs_[l.seg][l.at + (l.sizeCode == 5 ? i : i / 2)];
      out.push_back(l.sizeCode == 5 ? w : (w >> (32 * (i % 2))) & 0xffffffffu);
    }
    return out;
  }
  std::string text(const List &l, const std::string &what) const {
    if (l.null)
      return {};
    if (l.sizeCode != 2)
      bad(what + " is not text");
    std::string s(reinterpret_cast<const char *>(&segs_[l.seg][l.at]), l.count);
    while (!s.empty() && s.back() == '\0')
      s.pop_back();
    return s;
  }

private:
  static bool readRaw(std::istream &in, void *p, std::uint64_t n) {
    in.read(static_cast<char *>(p), static_cast<std::streamsize>(n));
    return static_cast<std::uint64_t>(in.gcount()) == n;
  }

  /// Follows the pointer at (seg, at): far pointers to their landing pads; returns
  /// the segment, the pointer's tag word and the target's first word.
  struct Resolved {
    std::uint32_t seg;
    std::uint64_t tag;
    std::uint64_t target;
  };
  Resolved resolve(std::uint32_t seg, std::uint64_t at, const std::string &what) const {
    const std::uint64_t w = word(seg, at, what);
    if ((w & 3) == 2) {
      const std::uint32_t s2 = static_cast<std::uint32_t>(w >> 32);
      const std::uint64_t pad = (w >> 3) & 0x1fffffffu;
      if (!(w & 4))
        return local(s2, pad, word(s2, pad, what), what);
      const std::uint64_t far = word(s2, pad, what), tag = word(s2, pad + 1, what);
      if ((far & 3) != 2)
        bad(what + ": a double-far landing pad does not hold a far pointer");
      return {static_cast<std::uint32_t>(far >> 32), tag, (far >> 3) & 0x1fffffffu};
    }
    return local(seg, at, w, what);
  }
  Resolved local(std::uint32_t seg, std::uint64_t at, std::uint64_t w, const std::string &what) const {
    if ((w & 3) == 2 || (w & 3) == 3)
      bad(what + ": a pointer of kind " + std::to_string(w & 3) + " where a struct or list belongs");
    std::int64_t off = static_cast<std::int64_t>((w >> 2) & 0x3fffffffu);
    if (off & 0x20000000)
      off -= 0x40000000;
    const std::int64_t target = static_cast<std::int64_t>(at) + 1 + off;
    if (target < 0)
      bad(what + ": a pointer before the start of its segment");
    return {seg, w, static_cast<std::uint64_t>(target)};
  }
  std::uint64_t word(std::uint32_t seg, std::uint64_t at, const std::string &what) const {
    if (seg >= segs_.size() || at >= segs_[seg].size())
      bad(what + ": a pointer leads outside the message (segment " + std::to_string(seg) + ", word " +
          std::to_string(at) + ")");
    return segs_[seg][at];
  }
  void requireWords(std::uint32_t seg, std::uint64_t at, std::uint64_t n, const std::string &what) const {
    if (seg >= segs_.size() || at > segs_[seg].size() || n > segs_[seg].size() - at)
      bad(what + " runs past the end of its segment (the message is truncated or damaged)");
  }
  Struct structAt(std::uint32_t seg, std::uint64_t at, const std::string &what) const {
    if (word(seg, at, what) == 0)
      return {};
    const Resolved r = resolve(seg, at, what);
    if ((r.tag & 3) != 0)
      bad(what + " is a list where a struct belongs");
    Struct s;
    s.seg = r.seg;
    s.at = r.target;
    s.ds = static_cast<std::uint16_t>(r.tag >> 32);
    s.pc = static_cast<std::uint16_t>(r.tag >> 48);
    s.null = false;
    requireWords(s.seg, s.at, std::uint64_t(s.ds) + s.pc, what);
    return s;
  }
  List listAt(std::uint32_t seg, std::uint64_t at, const std::string &what) const {
    if (word(seg, at, what) == 0)
      return {};
    const Resolved r = resolve(seg, at, what);
    if ((r.tag & 3) != 1)
      bad(what + " is a struct where a list belongs");
    List l;
    l.seg = r.seg;
    l.sizeCode = static_cast<unsigned>((r.tag >> 32) & 7);
    l.count = r.tag >> 35;
    l.null = false;
    if (l.sizeCode == 7) {
      const std::uint64_t tag = word(r.seg, r.target, what);
      const std::uint64_t n = (tag >> 2) & 0x3fffffffu;
      l.ds = static_cast<std::uint16_t>(tag >> 32);
      l.pc = static_cast<std::uint16_t>(tag >> 48);
      if (n * (std::uint64_t(l.ds) + l.pc) > l.count)
        bad(what + ": a struct list's elements do not fit its words");
      requireWords(r.seg, r.target + 1, l.count, what);
      l.count = n;
      l.at = r.target + 1;
    } else {
      static const unsigned bits[] = {0, 1, 8, 16, 32, 64, 64};
      l.at = r.target;
      requireWords(r.seg, l.at, (l.count * bits[l.sizeCode] + 63) / 64, what);
    }
    return l;
  }

  std::vector<std::vector<std::uint64_t>> segs_;
};

// Layout of the binary form (root struct: 0 data words, 2 pointers):
//   root.p0  List(Tensor)      Tensor: data w0 bits 0-15 type code;
//                                      p0 shape List(UInt64); p1 mapping List(List(Interval)),
//                                      one list per tile, Interval = w0 {begin: bits 0-31, end: 32-63};
//                                      p2 the view (ViewNode); p3 the type's name (Aspen's)
//   root.p1  List(Variable)    Variable: w0 bits 32-63 element count; w1 bits 0-15 type code;
//                                        p0 name; p1 the type's name (Aspen's)
//   ViewNode: w0 bits 0-15 kind; p0 the kind's struct:
//     0 (variable):   w0 bits 0-31 the variable's index
//     2 (dimShuffle): p0 input ViewNode, p1 permutation List(UInt32), p2 input shape List(UInt64)
//     100 (Aspen's):  p0 List(Int64) of [variable, start, stride, count] runs

void writeView(CapnpWriter &w, std::size_t ptr, const ViewExpr &v) {
  const std::size_t node = w.newStruct(ptr, 1, 1);
  w[node] = v.kind;
  switch (v.kind) {
  case ViewExpr::kVariable: {
    const std::size_t s = w.newStruct(node + 1, 1, 0);
    w[s] = v.variable;
    break;
  }
  case ViewExpr::kDimShuffle: {
    const std::size_t s = w.newStruct(node + 1, 0, 3);
    writeView(w, s, *v.input);
    w.u32List(s + 1, v.permutation);
    w.u64List(s + 2, v.inputShape);
    break;
  }
  default: {
    const std::size_t s = w.newStruct(node + 1, 0, 1);
    std::vector<std::uint64_t> flat;
    flat.reserve(v.runs.size() * 4);
    for (const auto &r : v.runs) {
      flat.push_back(r.var);
      flat.push_back(static_cast<std::uint64_t>(r.start));
      flat.push_back(static_cast<std::uint64_t>(r.stride));
      flat.push_back(r.count);
    }
    w.u64List(s, flat);
    break;
  }
  }
}

void writeBinary(std::ostream &out, const Document &doc) {
  CapnpWriter w;
  w.alloc(1); // the root pointer
  const std::size_t root = w.newStruct(0, 0, 2);
  const std::size_t tensors = w.newStructList(root, doc.tensors.size(), 1, 4);
  for (std::size_t i = 0; i < doc.tensors.size(); ++i) {
    const TensorRecord &t = doc.tensors[i];
    const std::size_t at = tensors + i * 5;
    w[at] = typeCode(t.type);
    w.u64List(at + 1, std::vector<std::uint64_t>(t.shape.begin(), t.shape.end()));
    const std::size_t tiles = w.newList(at + 2, 6, t.mapping.size());
    for (std::size_t tile = 0; tile < t.mapping.size(); ++tile) {
      const auto &intervals = t.mapping[tile];
      const std::size_t first = w.newStructList(tiles + tile, intervals.size(), 1, 0);
      for (std::size_t k = 0; k < intervals.size(); ++k)
        w[first + k] = std::uint64_t(intervals[k].begin()) | (std::uint64_t(intervals[k].end()) << 32);
    }
    writeView(w, at + 3, t.view);
    w.text(at + 4, t.type.toString().str());
  }
  const std::size_t vars = w.newStructList(root + 1, doc.variables.size(), 2, 2);
  for (std::size_t i = 0; i < doc.variables.size(); ++i) {
    const VariableRecord &v = doc.variables[i];
    const std::size_t at = vars + i * 4;
    w[at] = v.numElements << 32;
    w[at + 1] = typeCode(v.type);
    w.text(at + 2, v.name);
    w.text(at + 3, v.type.toString().str());
  }
  w.write(out);
}

ViewExpr readView(const CapnpReader &r, const CapnpReader::Struct &node, const std::string &where,
                  int depth) {
  if (node.null)
    bad(where + " has no view (which elements of which variables it holds)");
  if (depth > 256)
    bad(where + "'s view nests more than 256 operations deep");
  ViewExpr v;
  v.kind = static_cast<std::uint16_t>(r.dataWord(node, 0) & 0xffff);
  const auto body = r.structField(node, 0, where + "'s view");
  if (body.null)
    bad(where + "'s view of kind " + std::to_string(v.kind) + " has no body");
  switch (v.kind) {
  case ViewExpr::kVariable:
    v.variable = r.dataWord(body, 0) & 0xffffffffu;
    break;
  case ViewExpr::kDimShuffle:
    v.input = std::make_unique<ViewExpr>(readView(r, r.structField(body, 0, where), where, depth + 1));
    v.permutation = r.integers(r.listField(body, 1, where + "'s permutation"), where + "'s permutation");
    v.inputShape = r.integers(r.listField(body, 2, where + "'s shape"), where + "'s shape");
    break;
  case ViewExpr::kRegions: {
    const auto flat = r.integers(r.listField(body, 0, where + "'s regions"), where + "'s regions");
    if (flat.size() % 4)
      bad(where + "'s regions are not [variable, start, stride, count] runs");
    for (std::size_t i = 0; i < flat.size(); i += 4)
      v.runs.push_back({flat[i], static_cast<std::int64_t>(flat[i + 1]),
                        static_cast<std::int64_t>(flat[i + 2]), flat[i + 3]});
    break;
  }
  default:
    bad(where + "'s view is an operation of kind " + std::to_string(v.kind) +
        ", which Aspen does not know (it reads 0, a variable, 2, a dimShuffle, and its own 100)");
  }
  return v;
}

Document readBinary(std::istream &in) {
  CapnpReader r(in);
  Document doc;
  const auto root = r.root();
  if (root.null)
    bad("the message's root is null");
  const auto vars = r.listField(root, 1, "the variable list");
  for (std::uint64_t i = 0; i < vars.count; ++i) {
    if (vars.sizeCode != 7)
      bad("the variable list is not a list of structs");
    const auto s = r.element(vars, i);
    const std::string where = "variable " + std::to_string(i);
    VariableRecord v;
    v.name = r.text(r.listField(s, 0, where + "'s name"), where + "'s name");
    const std::string typeName = r.text(r.listField(s, 1, where + "'s type"), where + "'s type");
    const std::string named = where + (v.name.empty() ? "" : " ('" + v.name + "')");
    v.type =
        typeName.empty() ? typeFromCode(r.dataWord(s, 1) & 0xffff, named) : typeFromName(typeName, named);
    v.numElements = r.dataWord(s, 0) >> 32;
    doc.variables.push_back(std::move(v));
  }
  const auto tensors = r.listField(root, 0, "the tensor list");
  for (std::uint64_t i = 0; i < tensors.count; ++i) {
    if (tensors.sizeCode != 7)
      bad("the tensor list is not a list of structs");
    const auto s = r.element(tensors, i);
    const std::string where = "tensor " + std::to_string(i);
    TensorRecord t;
    const std::string typeName = r.text(r.listField(s, 3, where + "'s type"), where + "'s type");
    t.type =
        typeName.empty() ? typeFromCode(r.dataWord(s, 0) & 0xffff, where) : typeFromName(typeName, where);
    for (auto d : r.integers(r.listField(s, 0, where + "'s shape"), where + "'s shape"))
      t.shape.push_back(static_cast<std::size_t>(d));
    const auto tiles = r.listField(s, 1, where + "'s tile mapping");
    if (!tiles.null && tiles.sizeCode != 6)
      bad(where + "'s tile mapping is not a list of per-tile lists");
    t.mapping.resize(tiles.count);
    for (std::uint64_t tile = 0; tile < tiles.count; ++tile) {
      const auto intervals = r.listElement(tiles, tile, where + "'s mapping on tile " + std::to_string(tile));
      if (intervals.null || intervals.count == 0)
        continue;
      if (intervals.sizeCode != 7)
        bad(where + "'s mapping on tile " + std::to_string(tile) + " is not a list of intervals");
      for (std::uint64_t k = 0; k < intervals.count; ++k) {
        const std::uint64_t w0 = r.dataWord(r.element(intervals, k), 0);
        t.mapping[tile].emplace_back(w0 & 0xffffffffu, w0 >> 32);
      }
    }
    t.view = readView(r, r.structField(s, 2, where + "'s view"), where, 0);
    doc.tensors.push_back(std::move(t));
  }
  return doc;
}

// ---- JSON form ----------------------------------------------------------------

json viewJson(const ViewExpr &v) {
  switch (v.kind) {
  case ViewExpr::kVariable:
    return {{"variable", v.variable}};
  case ViewExpr::kDimShuffle:
    return {{"dimShuffle",
             {{"input", viewJson(*v.input)}, {"permutation", v.permutation}, {"inputShape", v.inputShape}}}};
  default: {
    json runs = json::array();
    for (const auto &r : v.runs)
      runs.push_back({r.var, r.start, r.stride, r.count});
    return {{"regions", std::move(runs)}};
  }
  }
}

void writeJson(std::ostream &out, const Document &doc) {
  json tensors = json::array();
  for (const auto &t : doc.tensors) {
    json mapping = json::array();
    for (std::size_t tile = 0; tile < t.mapping.size(); ++tile)
      for (const auto &i : t.mapping[tile])
        mapping.push_back({tile, i.begin(), i.end()});
    tensors.push_back({{"type", t.type.toString().str()},
                       {"shape", t.shape},
                       {"mapping", std::move(mapping)},
                       {"view", viewJson(t.view)}});
  }
  json variables = json::array();
  for (const auto &v : doc.variables)
    variables.push_back(
        {{"name", v.name}, {"type", v.type.toString().str()}, {"numElements", v.numElements}});
  const json d = {{"format", "aspen-tensors"},
                  {"version", 1},
                  {"tensors", std::move(tensors)},
                  {"variables", std::move(variables)}};
  out << d.dump(1) << "\n";
}

template <class T> T jsonGet(const json &j, const char *key, const std::string &where) {
  if (!j.is_object() || !j.contains(key))
    bad(where + " has no \"" + key + "\"");
  try {
    return j.at(key).get<T>();
  } catch (const json::exception &) {
    bad(where + "'s \"" + key + "\" has the wrong kind of value");
  }
}

ViewExpr viewFromJson(const json &j, const std::string &where, int depth) {
  if (depth > 256)
    bad(where + "'s view nests more than 256 operations deep");
  ViewExpr v;
  if (j.is_object() && j.contains("variable")) {
    v.kind = ViewExpr::kVariable;
    v.variable = jsonGet<std::uint64_t>(j, "variable", where + "'s view");
  } else if (j.is_object() && j.contains("dimShuffle")) {
    v.kind = ViewExpr::kDimShuffle;
    const json &d = j.at("dimShuffle");
    if (!d.is_object() || !d.contains("input"))
      bad(where + "'s dimShuffle has no \"input\"");
    v.input = std::make_unique<ViewExpr>(viewFromJson(d.at("input"), where, depth + 1));
    v.permutation = jsonGet<std::vector<std::uint64_t>>(d, "permutation", where + "'s dimShuffle");
    v.inputShape = jsonGet<std::vector<std::uint64_t>>(d, "inputShape", where + "'s dimShuffle");
  } else if (j.is_object() && j.contains("regions")) {
    v.kind = ViewExpr::kRegions;
    for (const auto &r : jsonGet<std::vector<std::vector<std::int64_t>>>(j, "regions", where + "'s view")) {
      if (r.size() != 4 || r[0] < 0 || r[3] < 0)
        bad(where + "'s regions are not [variable, start, stride, count] runs");
      v.runs.push_back({static_cast<std::uint64_t>(r[0]), r[1], r[2], static_cast<std::uint64_t>(r[3])});
    }
  } else {
    bad(where + "'s view is not {\"variable\": ...}, {\"dimShuffle\": ...} or {\"regions\": ...}");
  }
  return v;
}

Document readJson(std::istream &in) {
  json d;
  try {
    d = json::parse(in);
  } catch (const json::parse_error &e) {
    bad(std::string("the stream is not a JSON document (") + e.what() + ")");
  }
  if (!d.is_object() || d.value("format", std::string()) != "aspen-tensors")
    bad("the JSON document is not one serializeTensors wrote (no \"format\": \"aspen-tensors\")");
  Document doc;
  if (!d.contains("variables") || !d.at("variables").is_array() || !d.contains("tensors") ||
      !d.at("tensors").is_array())
    bad("the JSON document has no \"variables\" or \"tensors\" array");
  std::size_t i = 0;
  for (const json &j : d.at("variables")) {
    const std::string where = "variable " + std::to_string(i++);
    VariableRecord v;
    v.name = jsonGet<std::string>(j, "name", where);
    v.type = typeFromName(jsonGet<std::string>(j, "type", where), where + " ('" + v.name + "')");
    v.numElements = jsonGet<std::uint64_t>(j, "numElements", where);
    doc.variables.push_back(std::move(v));
  }
  i = 0;
  for (const json &j : d.at("tensors")) {
    const std::string where = "tensor " + std::to_string(i++);
    TensorRecord t;
    t.type = typeFromName(jsonGet<std::string>(j, "type", where), where);
    t.shape = jsonGet<std::vector<std::size_t>>(j, "shape", where);
    for (const auto &m : jsonGet<std::vector<std::vector<std::uint64_t>>>(j, "mapping", where)) {
      if (m.size() != 3)
        bad(where + "'s mapping entries are not [tile, begin, end]");
      if (m[0] > (1u << 24))
        bad(where + " is mapped to tile " + std::to_string(m[0]) + ", beyond any target");
      if (t.mapping.size() <= m[0])
        t.mapping.resize(m[0] + 1);
      t.mapping[m[0]].emplace_back(m[1], m[2]);
    }
    if (!j.contains("view"))
      bad(where + " has no \"view\"");
    t.view = viewFromJson(j.at("view"), where, 0);
    doc.tensors.push_back(std::move(t));
  }
  return doc;
}

// ---- from and to a graph ----------------------------------------------------------

std::string tensorName(std::size_t i, const Tensor &t) {
  return "tensor " + std::to_string(i) + " (" + t.shortString() + ")";
}

} // namespace

void Graph::serializeTensors(std::ostream &out, ArrayRef<Tensor> tensors, SerializationFormat format) const {
  if (!getImplPtr())
    throw poplar_error(
        "Graph::serializeTensors called on an empty Graph (default-constructed or moved from)");
  if (format != SerializationFormat::Binary && format != SerializationFormat::JSON)
    throw poplar_error("Graph::serializeTensors: unknown SerializationFormat " +
                       std::to_string(static_cast<int>(format)));
  const GraphData &data = getImpl();
  Document doc;
  std::unordered_map<VarId, std::uint64_t> index; // graph variable -> file variable
  auto fileVar = [&](VarId v) {
    auto [it, added] = index.emplace(v, doc.variables.size());
    if (added) {
      const auto &var = data.variables[v];
      doc.variables.push_back({var.name, var.type, var.numElements});
    }
    return it->second;
  };
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor &t = tensors[i];
    if (!t.valid())
      throw poplar_error("Graph::serializeTensors: tensor " + std::to_string(i) +
                         " is not valid (default-constructed)");
    if (t.getImpl().graph != data.id())
      throw poplar_error("Graph::serializeTensors: " + tensorName(i, t) + " belongs to a different graph");
    const auto &view = t.getImpl();
    TensorRecord rec;
    rec.type = t.elementType();
    rec.shape = t.shape();
    if (t.numElements() > 0xffffffffu)
      throw poplar_error("Graph::serializeTensors: " + tensorName(i, t) + " has " +
                         std::to_string(t.numElements()) +
                         " elements; the format's mapping intervals hold at most 2^32 - 1");
    const auto &segs = *view.segments;
    if (segs.size() == 1 && segs[0].start == 0 && segs[0].stride == 1 &&
        data.variables[segs[0].var].type == rec.type &&
        segs[0].count == data.variables[segs[0].var].numElements) {
      rec.view.kind = ViewExpr::kVariable;
      rec.view.variable = fileVar(segs[0].var);
    } else {
      rec.view.kind = ViewExpr::kRegions;
      for (const Segment &s : segs)
        rec.view.runs.push_back({fileVar(s.var), s.start, s.stride, s.count});
    }
    rec.mapping = getTileMapping(t, false);
    doc.tensors.push_back(std::move(rec));
  }
  for (const auto &v : doc.variables)
    if (v.numElements > 0xffffffffu)
      throw poplar_error("Graph::serializeTensors: variable '" + v.name + "' has " +
                         std::to_string(v.numElements) + " elements; the format holds at most 2^32 - 1");
  if (format == SerializationFormat::Binary)
    writeBinary(out, doc);
  else
    writeJson(out, doc);
  if (!out)
    throw poplar_error("Graph::serializeTensors: writing to the output stream failed");
}

std::vector<Tensor> Graph::deserializeTensors(std::istream &in, SerializationFormat format) {
  if (!getImplPtr())
    throw poplar_error(
        "Graph::deserializeTensors called on an empty Graph (default-constructed or moved from)");
  if (format != SerializationFormat::Binary && format != SerializationFormat::JSON)
    throw poplar_error("Graph::deserializeTensors: unknown SerializationFormat " +
                       std::to_string(static_cast<int>(format)));
  if (!in)
    bad("the input stream is not readable (a file that could not be opened?)");
  const Document doc = format == SerializationFormat::Binary ? readBinary(in) : readJson(in);

  // Check everything before adding anything, so a bad file leaves the graph as it was.
  const unsigned numTiles = getTarget().getNumTiles();
  auto varBytes = [&](std::uint64_t v) {
    return doc.variables[v].numElements * doc.variables[v].type.size();
  };
  std::function<std::uint64_t(const ViewExpr &, const Type &, const std::string &)> checkView =
      [&](const ViewExpr &v, const Type &type, const std::string &where) -> std::uint64_t {
    switch (v.kind) {
    case ViewExpr::kVariable: {
      if (v.variable >= doc.variables.size())
        bad(where + " views variable " + std::to_string(v.variable) + " but the file has " +
            std::to_string(doc.variables.size()) + " variables");
      if (varBytes(v.variable) % type.size())
        bad(where + " (" + type.toString().str() + ") views variable '" + doc.variables[v.variable].name +
            "' of " + std::to_string(varBytes(v.variable)) + " bytes, not a whole number of its elements");
      return varBytes(v.variable) / type.size();
    }
    case ViewExpr::kDimShuffle: {
      const std::uint64_t n = checkView(*v.input, type, where);
      std::uint64_t product = 1;
      for (auto d : v.inputShape)
        product *= d;
      if (product != n)
        bad(where + "'s dimShuffle reshapes " + std::to_string(n) + " elements to a shape of " +
            std::to_string(product));
      std::vector<std::uint64_t> sorted = v.permutation;
      std::sort(sorted.begin(), sorted.end());
      for (std::size_t k = 0; k < sorted.size(); ++k)
        if (sorted[k] != k || sorted.size() != v.inputShape.size())
          bad(where + "'s dimShuffle permutation is not a permutation of the " +
              std::to_string(v.inputShape.size()) + " dimensions");
      return n;
    }
    default: {
      std::uint64_t n = 0;
      for (const auto &r : v.runs) {
        if (r.var >= doc.variables.size())
          bad(where + " views variable " + std::to_string(r.var) + " but the file has " +
              std::to_string(doc.variables.size()) + " variables");
        const std::int64_t limit = static_cast<std::int64_t>(varBytes(r.var) / type.size());
        const std::int64_t last =
            r.start + static_cast<std::int64_t>(r.count == 0 ? 0 : r.count - 1) * r.stride;
        if (r.count == 0 || r.start < 0 || r.start >= limit || last < 0 || last >= limit)
          bad(where + " views elements " + std::to_string(r.start) + " to " + std::to_string(last) +
              " of variable '" + doc.variables[r.var].name + "', which has " + std::to_string(limit));
        n += r.count;
      }
      return n;
    }
    }
  };
  for (std::size_t i = 0; i < doc.tensors.size(); ++i) {
    const TensorRecord &t = doc.tensors[i];
    const std::string where = "tensor " + std::to_string(i);
    const std::uint64_t n = checkView(t.view, t.type, where);
    std::uint64_t product = 1;
    for (auto d : t.shape)
      product *= d;
    if (product != n)
      bad(where + " has shape " + aspen::ir::shapeString(t.shape) + " (" + std::to_string(product) +
          " elements) but its view holds " + std::to_string(n));
    for (std::size_t tile = 0; tile < t.mapping.size(); ++tile)
      for (const auto &iv : t.mapping[tile]) {
        if (tile >= numTiles)
          bad(where + " is mapped to tile " + std::to_string(tile) + " but this graph has " +
              std::to_string(numTiles) + " tiles");
        if (iv.begin() > iv.end() || iv.end() > n)
          bad(where + "'s mapping on tile " + std::to_string(tile) + " has the interval [" +
              std::to_string(iv.begin()) + ", " + std::to_string(iv.end()) + ") of its " + std::to_string(n) +
              " elements");
      }
  }

  std::vector<Tensor> vars;
  vars.reserve(doc.variables.size());
  for (const auto &v : doc.variables)
    vars.push_back(addVariable(v.type, {static_cast<std::size_t>(v.numElements)}, v.name));
  std::function<Tensor(const ViewExpr &, const Type &)> build = [&](const ViewExpr &v,
                                                                    const Type &type) -> Tensor {
    switch (v.kind) {
    case ViewExpr::kVariable: {
      Tensor t = vars[v.variable];
      return t.elementType() == type ? t : t.reinterpret(type).flatten();
    }
    case ViewExpr::kDimShuffle: {
      const std::vector<std::size_t> shape(v.inputShape.begin(), v.inputShape.end());
      const std::vector<unsigned> perm(v.permutation.begin(), v.permutation.end());
      return build(*v.input, type).reshape(shape).dimShuffle(perm).flatten();
    }
    default: {
      std::vector<Segment> segs;
      std::uint64_t n = 0;
      for (const auto &r : v.runs) {
        const auto &var = vars[r.var];
        segs.push_back({var.getImpl().segments->front().var, r.start, r.count == 1 ? 1 : r.stride, r.count});
        n += r.count;
      }
      return aspen::ir::makeTensor(getImplPtr(), type, {static_cast<std::size_t>(n)}, segs);
    }
    }
  };
  std::vector<Tensor> out;
  out.reserve(doc.tensors.size());
  for (const auto &t : doc.tensors) {
    Tensor flat = build(t.view, t.type);
    for (std::size_t tile = 0; tile < t.mapping.size(); ++tile)
      for (const auto &iv : t.mapping[tile])
        if (iv.size())
          setTileMapping(flat.slice(iv.begin(), iv.end()), static_cast<unsigned>(tile));
    out.push_back(flat.reshape(t.shape));
  }
  return out;
}

} // namespace poplar
