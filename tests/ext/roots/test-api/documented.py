"""A module for the api_layout tests, documented as lessons_code is (NumPy style)."""


def attend(x: list[float], scale: float) -> dict[str, int]:
    """Weight the values.

    Parameters
    ----------
    x
        The values.
    scale
        The factor.

    Returns
    -------
    dict of str to int
        The counts.

    Shape
    -----
    ``x`` is ``(n, d)``.

    Raises
    ------
    ValueError
        If ``scale`` is negative.
    """
    return {}
