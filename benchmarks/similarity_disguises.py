"""How disguised copies rank among honest work in ``tapetrace similarity``: the table of
tests/similarity_bank/disguises.py (each honest implementation copied under each disguise).

    .venv/bin/python benchmarks/similarity_disguises.py [EXERCISE...]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from similarity_bank import disguises  # noqa: E402


def main(argv: list[str]) -> int:
    """Prints the table, then per disguise the lowest score and the worst rank."""
    rows = disguises.table(argv or None)
    print(disguises.render(rows))
    print()
    for name in disguises.DISGUISES:
        mine = [r for r in rows if r["disguise"] == name]
        print(f"{name:<18} lowest score {min(float(r['score']) for r in mine):.3f}, worst rank "
              f"{max(int(r['rank'] or 10**6) for r in mine)}, best honest pair {max(float(r['best_honest']) for r in mine):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
