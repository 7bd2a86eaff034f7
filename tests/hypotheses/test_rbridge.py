"""selective.interop.rbridge: availability messages (run everywhere) and conversions and calls (need R)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from selective.interop import rbridge
from selective.interop.rbridge import (
    RNotAvailableError,
    call_r,
    r_available,
    r_eval,
    require_r,
    to_python,
    to_r_dataframe,
    why_r_unavailable,
)

REASON = why_r_unavailable()
needs_r = [pytest.mark.needs_r, pytest.mark.skipif(REASON is not None, reason=f"needs R and rpy2: {REASON}")]


class TestAvailability:
    def test_missing_rpy2_says_how_to_install(self, monkeypatch):
        monkeypatch.setattr(rbridge, "_state", {})
        monkeypatch.setitem(sys.modules, "rpy2", None)  # makes `import rpy2` raise ImportError
        reason = why_r_unavailable()
        assert "rpy2 is not installed" in reason
        assert "pip install 'selective[r]'" in reason and "apt-get install r-base-core" in reason
        assert r_available() is False
        with pytest.raises(RNotAvailableError, match=r"rpy2 is not installed: pip install 'selective\[r\]'"):
            require_r()
        with pytest.raises(ImportError):  # RNotAvailableError is an ImportError
            call_r("t.test", [1.0, 2.0, 3.0])
        # with R packages named, the message also says how to install them once R runs
        with_packages = why_r_unavailable(["glmnet", "MASS"])
        assert with_packages.startswith(reason) and "install.packages(c('glmnet', 'MASS'))" in with_packages

    def test_broken_r_says_what_failed(self, monkeypatch):
        monkeypatch.setattr(rbridge, "_state", {"error": "rpy2 3.5.17 is installed but could not start R (...)"})
        assert why_r_unavailable(["stats"]).startswith("rpy2 3.5.17 is installed but could not start R")

    def test_availability_iv(self):
        with pytest.raises(ValueError, match=r"`packages` must hold R package names; got 'not a name!'"):
            r_available(["not a name!"])
        with pytest.raises(ValueError,
                           match=r"`function_name` must name an R function, like 't.test' or 'stats::lm'; got 'q\(\)'"):
            call_r("q()")


class TestWithR:
    pytestmark = needs_r

    def test_base_packages_are_available(self):
        assert r_available(["stats", "utils"])
        require_r("stats")

    def test_missing_r_package_says_how_to_install(self):
        reason = why_r_unavailable(["stats", "surelyNotAnInstalledPackage"])
        assert "R package(s) 'surelyNotAnInstalledPackage' not installed" in reason
        assert "install.packages(c('surelyNotAnInstalledPackage'))" in reason
        with pytest.raises(RNotAvailableError, match="surelyNotAnInstalledPackage"):
            require_r(["surelyNotAnInstalledPackage"])

    def test_dataframe_round_trip(self):
        frame = pd.DataFrame({
            "y": [1.5, np.nan, -2.0], "n": [1, 2, 3], "flag": [True, False, True], "s": ["a", None, "c"],
            "cat": pd.Categorical(["u", "w", "u"], categories=["w", "u"]), "i": pd.array([1, None, 3], dtype="Int64"),
            "with space": [0.0, 1.0, 2.0], "big": [2**40, 1, 2],
        })
        classes = r_eval("sapply(d, class)", d=frame)
        assert list(classes) == ["numeric", "integer", "logical", "character", "factor", "integer", "numeric",
                                 "numeric"]
        assert r_eval("levels(d$cat)", d=frame).tolist() == ["w", "u"]
        assert r_eval("sum(is.na(d))", d=frame) == 3
        back = to_python(to_r_dataframe(frame))
        assert list(back.columns) == list(frame.columns)
        np.testing.assert_array_equal(back["y"], frame["y"])
        assert back["n"].tolist() == [1, 2, 3] and back["flag"].tolist() == [True, False, True]
        assert back["s"].tolist()[0] == "a" and pd.isna(back["s"][1])
        assert list(back["cat"].cat.categories) == ["w", "u"] and back["cat"].tolist() == ["u", "w", "u"]
        assert np.isnan(back["i"][1]) and back["big"][0] == 2**40

    def test_conversion_iv(self):
        with pytest.raises(TypeError, match=r"Cannot convert column 'when' \(dtype datetime64"):
            to_r_dataframe(pd.DataFrame({"when": pd.to_datetime(["2024-01-01"])}))
        with pytest.raises(TypeError, match="`frame` must be a pandas DataFrame; got list"):
            to_r_dataframe([1, 2])
        with pytest.raises(TypeError, match="`code` must be a string of R code; got int"):
            r_eval(3)

    def test_results_come_back_as_python_values(self):
        res = call_r("t.test", [1.0, 2.0, 3.0, 4.5], [2, 3, 5, 7, 8], **{"var.equal": True})
        assert isinstance(res, dict) and res["parameter"] == 7.0
        assert res["conf.int"].shape == (2,) and list(res["estimate"].index) == ["mean of x", "mean of y"]
        same = r_eval("t.test(x, y, var.equal = TRUE)", x=[1.0, 2.0, 3.0, 4.5], y=[2, 3, 5, 7, 8])
        assert same["p.value"] == res["p.value"]
        table = r_eval("coef(summary(lm(mpg ~ wt, mtcars)))")
        assert list(table.columns) == ["Estimate", "Std. Error", "t value", "Pr(>|t|)"]
        assert list(table.index) == ["(Intercept)", "wt"]
        assert r_eval("NULL") is None and np.isnan(r_eval("NA_real_")) and r_eval("'a'") == "a"
        np.testing.assert_array_equal(r_eval("matrix(1:4, 2)"), [[1, 3], [2, 4]])
        np.testing.assert_array_equal(r_eval("m", m=np.array([[1.0, 2.0], [3.0, 4.0]])), [[1.0, 2.0], [3.0, 4.0]])
        assert r_eval("head(mtcars, 2)").index.tolist() == ["Mazda RX4", "Mazda RX4 Wag"]
        assert r_eval("list(a = 1, b = 'x')") == {"a": 1.0, "b": "x"}

    @pytest.mark.skipif(shutil.which("R") is None, reason="needs the R command to build a test package")
    def test_r_libs_user_is_honoured(self, tmp_path, monkeypatch):
        package = tmp_path / "src" / "selectiveBridgeProbe"
        package.mkdir(parents=True)
        (package / "DESCRIPTION").write_text(
            "Package: selectiveBridgeProbe\nVersion: 0.0.1\nTitle: Probe\nDescription: Probe.\n"
            "License: MIT\nAuthor: selective\nMaintainer: selective <none@example.org>\n"
        )
        (package / "NAMESPACE").write_text("")
        library = tmp_path / "library"
        library.mkdir()
        subprocess.run(["R", "CMD", "INSTALL", "--no-test-load", "-l", str(library), str(package)],
                       check=True, capture_output=True)
        assert not r_available(["selectiveBridgeProbe"])
        monkeypatch.setenv("R_LIBS_USER", str(library))
        assert r_available(["selectiveBridgeProbe"])
        assert str(library) in r_eval(".libPaths()").tolist()
