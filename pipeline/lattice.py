"""Absorbing Markov chains on an integer lattice, solved to a proven error bound.

The chain's continuing states are the lattice points low <= x < goal; a move at or above `goal` ends
in the goal, one below `low` in ruin. Each state's moves are (jump, weight) with weights over a
common denominator. Solving M u = b (M = I - Q, Q the moves between continuing states):

1. an LU factorisation in binary floating point gives a first u: block-tridiagonal in numpy when
   every jump is short (flat betting: scipy's import alone would take longer than the solution),
   scipy's sparse LU otherwise (a Martingale's long jumps back);
2. iterative refinement: the residual b - M u is computed EXACTLY in integers (u held as integers
   over 2**PRECISION), corrected by the floating-point factors, until it is below 2**-PRECISION;
3. the bound: the expected-rounds solution t > 0 with M t >= c > 0 proves
   ||M^-1||_inf <= max(t) / c (M^-1 is non-negative), so |u - exact| <= ||M^-1||_inf ||residual||_inf.

The exact answers are rationals too long to print (a million bits and more for 1,000 units on
Banker); the error bound is a proof about the exact rational, not an estimate.
"""

from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from math import lcm

import numpy as np

PRECISION = 96  # bits after the point of the refined solutions
SHORT_JUMPS = 64  # lattice points: chains whose jumps are all this short are solved in blocks
MOST_REFINEMENTS = 12
SHOWN_DIGITS = 20


@dataclass(frozen=True)
class Chain:
    low: int  # the first continuing lattice point
    goal: int  # the first lattice point at which the goal is reached
    start: int
    denominator: int
    # (first, moves): from lattice point `first` to the next band's (or the goal), every state moves by
    # [(jump, weight), ...], the weights summing to `denominator`; the first band starts at `low`
    bands: list[tuple[int, list]]

    @property
    def fill(self) -> int:
        """About how many entries the LU factors hold: the states times the longest jump back."""
        size = self.goal - self.low
        return size * min(size, max(-jump for _, moves in self.bands for jump, _ in moves))

    @property
    def work(self) -> int:
        """About how many steps the LU elimination takes: the states times the longest jump back times the
        longest jump forward, each at most the states. A Martingale on a bet that pays far more than it
        stakes (Tie, Dragon 7) jumps far both ways: its factors stay small while their making grows."""
        size = self.goal - self.low
        jumps = [jump for _, moves in self.bands for jump, _ in moves]
        return size * min(size, max(1, -min(jumps))) * min(size, max(1, max(jumps)))

    def band_states(self) -> list[np.ndarray]:
        ends = [first for first, _ in self.bands[1:]] + [self.goal]
        return [np.arange(first - self.low, end - self.low) for (first, _), end in zip(self.bands, ends)]


@dataclass(frozen=True)
class Certified:
    """A computed value and a proven bound on its distance from the exact rational."""

    value: Fraction
    error: Fraction

    def scaled(self, factor: Fraction) -> "Certified":
        return Certified(self.value * factor, self.error * abs(factor))

    def complement(self) -> "Certified":
        return Certified(1 - self.value, self.error)

    def contains(self, exact: Fraction) -> bool:
        return abs(exact - self.value) <= self.error

    def document(self) -> dict:
        with localcontext() as context:
            context.prec = SHOWN_DIGITS
            value = Decimal(self.value.numerator) / Decimal(self.value.denominator)
        return {"value": str(value), "error_bound": f"{float(self.error):.1e}"}


class _BlockTridiagonal:
    """LU factors of a matrix whose entries all lie within `width` of the diagonal, seen as tridiagonal
    in blocks of width x width (block elimination without pivoting between blocks, which M = I - Q,
    diagonally dominant with a non-positive Q part, does not need)."""

    def __init__(self, rows: np.ndarray, cols: np.ndarray, values: np.ndarray, size: int, width: int):
        self.size, self.width = size, width
        count = -(-size // width)
        # per block row: the blocks left of, on and right of the diagonal
        place = ((rows // width * 3 + cols // width - rows // width + 1) * width + rows % width) * width + cols % width
        blocks = np.bincount(place, values, count * 3 * width * width).reshape(count, 3, width, width)
        padding = np.arange(size, count * width)  # rows past the chain: the identity
        blocks[padding // width, 1, padding % width, padding % width] = 1.0
        self.right = blocks[:, 2]
        self.inverses = np.empty((count, width, width))
        self.multipliers = np.zeros((count, width, width))
        self.inverses[0] = np.linalg.inv(blocks[0, 1])
        for block in range(1, count):
            self.multipliers[block] = blocks[block, 0] @ self.inverses[block - 1]
            self.inverses[block] = np.linalg.inv(blocks[block, 1] - self.multipliers[block] @ self.right[block - 1])

    def solve(self, vector: np.ndarray) -> np.ndarray:
        count = len(self.inverses)
        forward = np.zeros(count * self.width)
        forward[:self.size] = vector
        forward = forward.reshape(count, self.width)
        for block in range(1, count):
            forward[block] -= self.multipliers[block] @ forward[block - 1]
        solution = np.empty_like(forward)
        solution[-1] = self.inverses[-1] @ forward[-1]
        for block in range(count - 2, -1, -1):
            solution[block] = self.inverses[block] @ (forward[block] - self.right[block] @ solution[block + 1])
        return solution.reshape(-1)[:self.size]


class _System:
    """M = I - Q for one chain: its float LU factors, and exact products with integer vectors."""

    def __init__(self, chain: Chain):
        self.size = chain.goal - chain.low
        self.groups = [(moves, states) for (_, moves), states in zip(chain.bands, chain.band_states())]
        self.denominator = chain.denominator
        rows, cols, values = self._entries()
        width = max(abs(jump) for moves, _ in self.groups for jump, _ in moves)
        if width <= SHORT_JUMPS:
            self.lu = _BlockTridiagonal(rows, cols, values, self.size, max(width, SHORT_JUMPS // 2))
        else:
            from scipy.sparse import coo_matrix
            from scipy.sparse.linalg import splu

            matrix = coo_matrix((values, (rows, cols)), (self.size, self.size)).tocsc()
            self.lu = splu(matrix, permc_spec="MMD_AT_PLUS_A")  # the least fill on these chains

    def _entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """M's entries as (rows, columns, values) in binary floating point."""
        rows, cols, values = [np.arange(self.size)], [np.arange(self.size)], [np.ones(self.size)]
        for moves, states in self.groups:
            for jump, weight in moves:
                inside = states[(states + jump >= 0) & (states + jump < self.size)]
                rows.append(inside)
                cols.append(inside + jump)
                values.append(np.full(len(inside), -float(Fraction(weight, self.denominator))))
        return np.concatenate(rows), np.concatenate(cols), np.concatenate(values)

    def goal_weights(self) -> np.ndarray:
        """Per state, the weight of its moves that reach the goal."""
        weights = np.zeros(self.size, dtype=object)
        for moves, states in self.groups:
            for jump, weight in moves:
                weights[states[states + jump >= self.size]] += weight
        return weights

    def times(self, values: np.ndarray) -> np.ndarray:
        """denominator * M @ values, exactly, for integer `values` (an object array)."""
        product = values * self.denominator
        for moves, states in self.groups:
            for jump, weight in moves:
                inside = states[(states + jump >= 0) & (states + jump < self.size)]
                product[inside] -= values[inside + jump] * weight
        return product

    def refined(self, numerators: np.ndarray, denominator: int) -> tuple[np.ndarray, Fraction]:
        """Integers V with V / 2**PRECISION ~ u for M u = numerators / denominator, and max |b - M u|.

        Rounding V to integers leaves a residual up to 2**-PRECISION (M's rows sum to at most 2 in
        absolute value): refinement stops there, or once it gains nothing."""
        scale = 1 << PRECISION
        whole = denominator * self.denominator
        solution = np.zeros(self.size, dtype=object)
        target = numerators * (self.denominator * scale)
        previous = None
        for _ in range(MOST_REFINEMENTS):
            residual = target - self.times(solution) * denominator
            largest = int(np.abs(residual).max())
            if largest <= 4 * whole or (previous is not None and largest * 2 > previous):
                break
            previous = largest
            correction = self.lu.solve((residual / whole).astype(float))
            solution += np.array([int(c) for c in np.rint(correction)], dtype=object)
        return solution, Fraction(largest, whole * scale)


def _per_state(chain: Chain, per_band: list[Fraction]) -> tuple[np.ndarray, int]:
    """A value per band as integer numerators per state over one denominator."""
    denominator = lcm(*{value.denominator for value in per_band})
    numerators = np.zeros(chain.goal - chain.low, dtype=object)
    for value, states in zip(per_band, chain.band_states()):
        numerators[states] = value.numerator * (denominator // value.denominator)
    return numerators, denominator


def solve(chain: Chain, rewards: list[list[Fraction]]) -> list[Certified]:
    """At the start state: the probability of reaching the goal, then the expected total of each reward
    (a value per band, earned at every move from its states). rewards[0], the expected rounds of a
    move, must be at least 1 everywhere: it certifies the bounds."""
    system = _System(chain)
    scale = Fraction(1, 1 << PRECISION)
    goal, goal_residual = system.refined(system.goal_weights(), chain.denominator)
    solved = {}  # flat betting stakes one unit a round: its rounds and its stakes are one solution
    solutions = [solved.setdefault(tuple(reward), system.refined(*_per_state(chain, reward))) if tuple(reward)
                 not in solved else solved[tuple(reward)] for reward in rewards]
    rounds, rounds_residual = solutions[0]
    floor = min(rewards[0]) - rounds_residual
    if floor <= 0 or rounds.min() <= 0:
        raise ArithmeticError("the expected-rounds solution did not converge: no error bound")
    inverse_norm = rounds.max() * scale / floor  # an object array of exact integers
    index = chain.start - chain.low
    return [Certified(values[index] * scale, residual * inverse_norm)
            for values, residual in [(goal, goal_residual), *solutions]]
