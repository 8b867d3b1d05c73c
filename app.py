"""CAPE Lab — entry point. Run with `bash run.sh` (or `streamlit run app.py`)."""

import streamlit as st

from serving import jobs, profiling, uploads
from ui import lecturer, presenter, sections, state
from ui.guard import drop_unreadable_query_params, plain

jobs.note_visit()  # who is here: a heavy job gets every core only while nobody else is
uploads.install()  # uploaded bytes bounded per session and per server (serving/uploads.py)
presenting = presenter.is_on()
st.set_page_config(
    page_title="CAPE Lab",
    page_icon=":material/lock:",
    layout="wide",
    initial_sidebar_state="collapsed" if presenting else "auto",
)


# (script, title, Material icon) by section; the first page is the default
SECTIONS = {
    "Learn": [
        ("overview", "Overview", "home"),
        ("learn", "Lessons", "school"),
        ("protocol", "Protocol, step by step", "animation"),
        ("averaging", "CAPE averaging", "functions"),
        ("privacy", "Privacy explorer", "shield"),
        ("glossary", "Glossary", "menu_book"),
        ("classroom", "For the lecturer", "co_present"),
    ],
    "Beyond the paper": [
        ("trust_models", "Trust models", "handshake"),
        ("composition", "Repeated releases", "repeat"),
        ("audit", "Attack audit", "gavel"),
    ],
    "Experiments": [
        ("pca", "PCA", "show_chart"),
        ("tensor", "Tensor decomposition", "view_in_ar"),
        ("paper_figures", "Paper figures", "article"),
    ],
}


def _pages() -> dict[str, list[st.Page]]:
    """The app's pages by section, made once per session: ``st.Page`` resolves its script's
    path on the disk (~0.1 ms a page, ~3 % of a cached slider move for the 12; issue #36
    item 4). A session runs one script at a time, so its pages are never run concurrently."""
    made = st.session_state.get(PAGES_KEY)
    if made is None:
        made = st.session_state[PAGES_KEY] = {
            section: [
                st.Page(
                    f"app_pages/{script}.py",
                    title=title,
                    icon=f":material/{icon}:",
                    default=script == "overview",
                )
                for script, title, icon in entries
            ]
            for section, entries in SECTIONS.items()
        }
    return made


PAGES_KEY = "_cape_pages"  # the session's st.Page objects (not a setting: no page prefix)
pages = _pages()
if not lecturer.check():  # students: the lecturer's page is not there, nor are its links
    # by script name, not ``Page.url_path``: a job's child process re-runs this file as its
    # main module outside Streamlit (multiprocessing's forkserver), where a Page has no path
    pages = {
        section: [
            page
            for (script, _, _), page in zip(SECTIONS[section], entries, strict=True)
            if script != "classroom"
        ]
        for section, entries in pages.items()
    }
dropped = drop_unreadable_query_params()  # before any widget reads the URL
nav = st.navigation(pages, position="top" if presenting else "sidebar", expanded=True)
presenter.toggle()  # the one setting shared by every page (URL key `present`)
if dropped:
    st.warning(
        plain(f"Ignored unreadable numbers in the link: {', '.join(dropped)[:200]}"),
        icon=":material/link_off:",
    )
if lecturer.is_lecturer():
    lecturer.remember()
state.install_history()  # Back/Forward step through settings (docs/state.md)
state.enter(nav.url_path, st.query_params)  # a link's settings replace a page's remembered ones
with profiling.rerun(nav):  # CAPE_PROFILE_DIR: a cProfile file per run
    nav.run()
sections.land()  # a link that names a section of the page lands on it (learning/sections.py)
