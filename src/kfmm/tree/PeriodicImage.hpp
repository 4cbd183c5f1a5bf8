// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TREE_PERIODIC_IMAGE_HPP
#define KFMM_TREE_PERIODIC_IMAGE_HPP

// Periodic images of source cells in the interaction lists.
//
// With periodic boundaries the tree's cube is the period, and a list entry's source is a cell
// of the tree translated by a whole number n of periods in each direction, |n_d| <= reach:
// the near images of the lattice, whose cells the traversal meets as it meets the tree's own
// (tree/InteractionLists.hpp); the images beyond reach act through the root's expansions
// (periodic/FarLattice.hpp). The image rides in the entry's source index: the cell in the low
// cell_bits bits and the image's code in the bits above, n_d mod 5 in base 5, so that the
// image n = 0 is code 0 and an entry without periodic boundaries is its cell number. Every
// reader of a list's sources takes the cell with cellOf and the translation with offset.

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kfmm::tree
{

struct PeriodicImage
{
  /// The images the lists hold: |n_d| <= reach in each direction (5^3 = 125 of them).
  static constexpr int reach = 2;
  /// Cells of a source tree: below 2^cell_bits (buildInteractionLists checks it).
  static constexpr int cell_bits = 25;
  static constexpr std::uint32_t cell_mask = (std::uint32_t(1) << cell_bits) - 1;

  /// The cell of a list entry's source.
  KOKKOS_INLINE_FUNCTION static int cellOf(int source)
  {
    return static_cast<int>(static_cast<std::uint32_t>(source) & cell_mask);
  }

  /// The image's translation n_d along axis d, in periods.
  KOKKOS_INLINE_FUNCTION static int offset(int source, int d)
  {
    int code = static_cast<int>(static_cast<std::uint32_t>(source) >> cell_bits);
    for (int k = 2; k > d; --k)
      code /= 5;
    int const digit = code % 5;
    return digit > reach ? digit - 5 : digit;
  }

  /// The source index of cell `cell` translated by (nx, ny, nz) periods.
  KOKKOS_INLINE_FUNCTION static int pack(int cell, int nx, int ny, int nz)
  {
    std::uint32_t const code =
        static_cast<std::uint32_t>(((nx + 5) % 5) * 25 + ((ny + 5) % 5) * 5 + (nz + 5) % 5);
    return static_cast<int>(static_cast<std::uint32_t>(cell) | code << cell_bits);
  }

  /// The source index of `cell` in the image opposite to that of `source` (translated by
  /// -n): with `source` a pair's source and `cell` its target, the pair's other direction.
  KOKKOS_INLINE_FUNCTION static int opposite(int source, int cell)
  {
    return pack(cell, -offset(source, 0), -offset(source, 1), -offset(source, 2));
  }

  /// The source index of `cell` in the image of `source`.
  KOKKOS_INLINE_FUNCTION static int sameImage(int source, int cell)
  {
    return static_cast<int>((static_cast<std::uint32_t>(source) & ~cell_mask) |
                            static_cast<std::uint32_t>(cell));
  }
};

/// The translation of list entries' sources: `period` times their image's n (0 without
/// periodic boundaries, where every image is n = 0).
struct ImageShift
{
  static constexpr bool translates = true;
  double period = 0;

  KOKKOS_INLINE_FUNCTION double operator()(int source, int d) const
  {
    // The central image (every entry in free space) without the image's decoding, whose
    // divisions the near field and the traversal would otherwise pay per source.
    if (static_cast<std::uint32_t>(source) >> PeriodicImage::cell_bits == 0)
      return 0;
    return period * static_cast<double>(PeriodicImage::offset(source, d));
  }
};

/// The translation of free space's list entries: none, and known to be none where a kernel
/// is compiled (the near field's staging then adds nothing, and holds no translation).
struct NoImageShift
{
  static constexpr bool translates = false;

  KOKKOS_INLINE_FUNCTION constexpr double operator()(int, int) const { return 0; }
};

} // namespace kfmm::tree

#endif
