"""Counterfactual edits (Residual Distribution Fairness §7, App. M, App. O): demographic swap and identity removal.

The swap list is the explanation data's gender word pairs (``fairviz.explain.data.GENDER_PAIRS``) plus a few
common pairs the paper's examples use (male/female, boyfriend/girlfriend, plurals), applied both ways with word
boundaries and the original's capitalisation. "her" is ambiguous (him or his); it becomes "his". Identity-term
removal deletes gendered words and a Dixon et al. (2018)-style list of identity terms. As the paper warns
(App. M), a swap can change a sentence's meaning: the page shows every edited example next to its original.
"""
from __future__ import annotations

import re
from functools import lru_cache

from fairviz.explain.data import GENDER_PAIRS

EXTRA_PAIRS = {"male": "female", "boyfriend": "girlfriend", "boys": "girls", "fathers": "mothers",
               "brothers": "sisters", "sons": "daughters", "husbands": "wives", "kings": "queens", "mr": "mrs",
               "grandson": "granddaughter", "dad": "mom", "gentlemen": "ladies", "males": "females",
               "guy": "gal", "men's": "women's", "man's": "woman's"}
IDENTITY_TERMS = ("gay", "lesbian", "bisexual", "transgender", "trans", "queer", "homosexual", "heterosexual",
                  "black", "white", "african american", "african", "asian", "latino", "latina", "hispanic",
                  "mexican", "caucasian", "native american", "muslim", "islam", "islamic", "jewish", "jew", "jews",
                  "christian", "catholic", "buddhist", "hindu", "atheist", "immigrant", "immigrants", "disabled",
                  "deaf", "blind", "women", "men", "woman", "man", "female", "male", "girl", "boy")


@lru_cache(maxsize=1)
def swap_map() -> dict[str, str]:
    """Lower-case word → its counterpart, both directions; the female → male direction of a many-to-one pair
    keeps the first male word listed ("her" → "him" is overridden to "his", our choice)."""
    pairs = {**GENDER_PAIRS, **EXTRA_PAIRS}
    out: dict[str, str] = {}
    for male, female in pairs.items():
        out.setdefault(male, female)
        out.setdefault(female, male)
    out["her"] = "his"
    return out


def _pattern(words) -> re.Pattern:
    alternatives = sorted({re.escape(w) for w in words}, key=len, reverse=True)
    return re.compile(r"(?<![\w'])(" + "|".join(alternatives) + r")(?![\w'])", re.IGNORECASE)


@lru_cache(maxsize=1)
def _swap_pattern() -> re.Pattern:
    return _pattern(swap_map())


@lru_cache(maxsize=1)
def _identity_pattern() -> re.Pattern:
    return _pattern(set(IDENTITY_TERMS) | set(swap_map()))


def _case_like(original: str, word: str) -> str:
    if len(original) > 1 and original.isupper():
        return word.upper()
    if original[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def demographic_swap(text: str) -> str:
    """he ↔ she, man ↔ woman, … (every listed word, both directions, case kept)."""
    table = swap_map()
    return _swap_pattern().sub(lambda m: _case_like(m.group(0), table[m.group(0).lower()]), text)


def identity_removal(text: str) -> str:
    """The text with every gendered word and identity term deleted (spaces tidied)."""
    removed = _identity_pattern().sub("", text)
    return re.sub(r"\s{2,}", " ", removed).strip()


EDITS = {"demographic_swap": demographic_swap, "identity_removal": identity_removal}
