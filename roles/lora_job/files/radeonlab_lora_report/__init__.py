# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet report, written on the controller from the results the hosts sent back (``python -m
radeonlab_lora_report.report RESULTS_DIR``). Kept out of the radeonlab_lora package, which ships to every host."""
