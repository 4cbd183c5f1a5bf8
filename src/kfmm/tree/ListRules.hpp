// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TREE_LIST_RULES_HPP
#define KFMM_TREE_LIST_RULES_HPP

// What the interaction lists (InteractionLists.hpp) are built for, in the tree's own terms:
// which lists the far pairs go to, and the rule that makes a pair of cells far. The solver's
// options (kfmm::Method, kfmm::Acceptance) are these types, so that the tree needs nothing
// of the solver.

namespace kfmm::tree
{

/// The lists of the traversal, named after the method that reads them (kfmm::Method).
enum class ListKind
{
  fmm,     ///< far pairs in the M2L list (rows: target cells), near pairs in the P2P list
  treecode ///< far pairs in the M2P list (rows: target leaves), near pairs in the P2P list
};

/// Which pairs of cells interact through their expansions (the multipole acceptance
/// criterion of the interaction lists).
/// How the traversal of a periodic box pairs cells with the near images' cells
/// (tree/InteractionLists.hpp): one decision per pair and its mirror, or per direction.
enum class ImagePairs
{
  mutual,  ///< (a, b + n) stands for (b, a - n) too: half the pairs, a cell and its own image
           ///< split on both sides
  directed ///< (a, b + n) and (b, a - n) traversed apart, as between two trees
};

enum class Acceptance
{
  theta,  ///< (R_t + R_s) < theta |c_t - c_s|, with R the radius of a ball about the cell's
          ///< centre that holds its particles (Dehnen 2002; Yokota & Barba 2011); for targets
          ///< that are not the sources, unequal cells each R within theta / (2 - theta) of
          ///< the distance from the other cell's particles (tree::detail::thetaAccepts,
          ///< docs/ACCURACY.md)
  classic ///< well separated: the cells' boxes are at least one box of the larger cell
          ///< apart, so same-level neighbours are near (Greengard & Rokhlin 1987); theta
          ///< is not used
};

} // namespace kfmm::tree

#endif
