"""A masked LM's output layer run only where it is read.

A masked-marginal score reads a handful of positions of each input, yet ``model(ids).logits``
runs the MLM head (a dense layer, an activation, a layer norm and the ``[hidden, vocabulary]``
decoder) at every position. For the architectures of :data:`SPLIT_HEADS` the forward pass is
exactly ``logits = head(encoder(ids)[0])``, with a head that acts on each position alone, so

    logits[rows, positions] = head(encoder(ids)[0][rows, positions])

and only the read positions go through the head (as ``dna-hf`` runs its output layer at the
scored positions only, ``causal_scoring.split_output_layer``). Any other class, a checkpoint's
own code among them (``trust_remote_code``: its forward may do more, e.g. Caduceus' reverse-
complement averaging), keeps the full ``model(ids).logits``.
"""

from __future__ import annotations

SPLIT_HEADS = {
    "transformers.models.bert.modeling_bert.BertForMaskedLM": "cls",
    "transformers.models.esm.modeling_esm.EsmForMaskedLM": "lm_head",
    "transformers.models.roberta.modeling_roberta.RobertaForMaskedLM": "lm_head",
    "gpn.model.GPNForMaskedLM": "cls",
    "gpn.legacy.ConvNetForMaskedLM": "cls",  # songlab/gpn-brassicales
}
"""Masked-LM classes (``module.name``) whose logits are ``head(base_model(ids)[0])``, with the
attribute that holds their position-wise head."""


def split_head(model):
    """``(encoder, head)`` for a model of :data:`SPLIT_HEADS`, else ``(None, None)``."""
    cls = type(model)
    attribute = SPLIT_HEADS.get(f"{cls.__module__}.{cls.__qualname__}")
    encoder = getattr(model, "base_model", None)
    if attribute is None or encoder is None or encoder is model:
        return None, None
    return encoder, getattr(model, attribute)


class ReadLogits:
    """``logits[rows, positions]`` of a masked LM, through the head at those positions alone
    where it splits off (module docstring), else from the full logits."""

    def __init__(self, model) -> None:
        self.model = model
        self.encoder, self.head = split_head(model)

    @property
    def split(self) -> bool:
        """Whether the head runs at the read positions only."""
        return self.encoder is not None

    def __call__(self, ids, rows, positions):
        """The logits at ``(rows[i], positions[i])`` of the inputs ``ids`` (``[batch, tokens]``)."""
        if self.encoder is None:
            return self.model(input_ids=ids).logits[rows, positions]
        states = self.encoder(input_ids=ids)[0]
        return self.head(states[rows, positions])
