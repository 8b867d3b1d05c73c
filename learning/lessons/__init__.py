"""Guided lessons of the Learn section: content as data, scenes that compute, one renderer
(``app_pages/learn.py``)."""

from learning.lessons.content import LESSONS
from learning.lessons.model import Control, Explore, Lesson, Question, Step

__all__ = ["LESSONS", "Control", "Explore", "Lesson", "Question", "Step"]
