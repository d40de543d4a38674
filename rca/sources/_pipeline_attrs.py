"""Build the ``attrs`` JSON object column from typed fragments, leaving out missing keys."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl


def json_number(value: pl.Expr) -> pl.Expr:
    """A number as JSON text; null (key left out) when missing or not finite."""
    return pl.when(value.cast(pl.Float64, strict=False).is_finite()).then(value.cast(pl.String))


def json_text(value: pl.Expr) -> pl.Expr:
    """A string as a quoted, escaped JSON string."""
    encoded = pl.struct(value.alias("v")).struct.json_encode()
    return pl.when(value.is_not_null()).then(encoded.str.strip_prefix('{"v":').str.strip_suffix("}"))


def json_flag(value: pl.Expr) -> pl.Expr:
    """A boolean as JSON ``true``/``false``."""
    return pl.when(value).then(pl.lit("true")).when(value.not_()).then(pl.lit("false"))


def json_object(fields: Mapping[str, pl.Expr], raw: Sequence[pl.Expr] = ()) -> pl.Expr:
    """``{"key": value, ...}`` from JSON-encoded values; ``raw`` are ready-made ``"k":v`` runs.

    Null when no key has a value.
    """
    members = [pl.concat_str([pl.lit(f'"{name}":'), value]) for name, value in fields.items()]
    body = pl.concat_str([*members, *raw], separator=",", ignore_nulls=True)
    return pl.when(body != "").then(pl.concat_str([pl.lit("{"), body, pl.lit("}")]))
