"""The recipe's models reject fields they do not know: a typo in a hand-edited recipe is an
error, not a silently ignored setting."""

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")
