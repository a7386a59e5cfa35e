// Codelets for the MIMD sample: a tiny reverse-Polish interpreter, and a
// ranking vertex that reads every tile's result.
#include <poplar/Vertex.hpp>

// Evaluates one reverse-Polish program such as "3 4 + 2 *": integers, the
// operators + - * / % and 'd' (duplicate), 's' (swap); blanks separate tokens.
// Every tile follows its own control flow through its own text.
class RpnInterpreter : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<char>> text;
  poplar::Output<int> result;

  bool compute() {
    int stack[32];
    int depth = 0;
    unsigned i = 0;
    const unsigned n = text.size();
    while (i < n && text[i] != '\0') {
      char c = text[i];
      if (c == ' ') {
        ++i;
        continue;
      }
      if (c >= '0' && c <= '9') {
        int value = 0;
        while (i < n && text[i] >= '0' && text[i] <= '9')
          value = value * 10 + (text[i++] - '0');
        if (depth == 32)
          return false;
        stack[depth++] = value;
        continue;
      }
      if (c == 'd') {
        if (depth < 1 || depth == 32)
          return false;
        stack[depth] = stack[depth - 1];
        ++depth;
      } else {
        if (depth < 2)
          return false;
        int b = stack[--depth], a = stack[--depth];
        switch (c) {
        case '+':
          stack[depth++] = a + b;
          break;
        case '-':
          stack[depth++] = a - b;
          break;
        case '*':
          stack[depth++] = a * b;
          break;
        case '/':
          if (b == 0)
            return false;
          stack[depth++] = a / b;
          break;
        case '%':
          if (b == 0)
            return false;
          stack[depth++] = a % b;
          break;
        case 's':
          stack[depth++] = b;
          stack[depth++] = a;
          break;
        default:
          return false;
        }
      }
      ++i;
    }
    if (depth != 1)
      return false;
    *result = stack[0];
    return true;
  }
};

// Ranks this tile's result among all tiles' results (all-to-all exchange):
// the number of results smaller than this one, ties broken by tile index.
class RankResult : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<int>> all;
  poplar::Output<unsigned> rank;
  unsigned self;

  bool compute() {
    unsigned r = 0;
    for (unsigned i = 0; i < all.size(); ++i)
      if (all[i] < all[self] || (all[i] == all[self] && i < self))
        ++r;
    *rank = r;
    return true;
  }
};
