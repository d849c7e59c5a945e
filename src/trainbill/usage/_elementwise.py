"""The elementwise operations ``usage_for``'s steps share with the time model's layout search
(one implementation, in ``timemodel._elementwise``, which ``usage`` builds on)."""

from trainbill.timemodel._elementwise import first, least, most, sqrt, uniform, where

__all__ = ["first", "least", "most", "sqrt", "uniform", "where"]
