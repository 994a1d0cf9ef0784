"""Data conditions and debiasing under them: *Systematic Evaluation of Predictive Fairness* (Han, Shen, Cohn,
Baldwin and Frermann, AACL 2022).

- ``distributions`` CB / JB interpolation with clipping, the (p_y, s) grid, proxy classes for regression
- ``resample``      drawing m training rows that follow a condition
- ``metrics``       accuracy, macro-F1, TPR/FPR/PPR GAP, Fairness, DTO, Pearson gaps, leakage, bootstrap CIs
- ``selection``     mean ± std over seeds, Pareto filter on dev, min dev DTO (or a fairness constraint)
- ``evaluation``    evaluation reweighting of fixed predictions (no retraining)
- ``data``          Moji-like / Bios-like generators, Adult features, text embeddings, uploads
- ``methods``       the nine debiasing methods in torch over a two-tanh-layer MLP
- ``simulate``      the retraining sweep: conditions × methods × seeds → runs, selected, training cells
- ``figures``       Plotly figures of those results
- ``reference``     the paper's Tables 1–4
"""
