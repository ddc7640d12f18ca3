// tlab/tool/base/text_table.h: rows of cells as an aligned plain-text table.
//
// Every column is as wide as its widest cell; text columns (left(column) true) are
// left-aligned, the rest right-aligned; two spaces between columns, no trailing
// blanks, one '\n' per row. Rows may differ in length (missing cells are empty).
//
// Cost: O(cells). Ground rules: pure function.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace tlab::tool {

template <class Left>
std::string aligned_table(const std::vector<std::vector<std::string>>& rows, Left&& left) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += left(i) ? fmt::format("{:<{}}", row[i], width[i])
                      : fmt::format("{:>{}}", row[i], width[i]);
      line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace tlab::tool
