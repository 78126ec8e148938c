"""Runs `docling-serve` (same arguments) with the PDF pipeline built on the first PDF instead of before every document.

Why: docling-jobkit builds the PDF pipeline before every conversion, whatever the format
(docling_jobkit/convert/manager.py, DoclingConverterManager.convert_documents: `converter.initialize_pipeline(
format=InputFormat.PDF)`), and building it loads the layout, table-structure and OCR weights. The machines running
the real tests reach no model hub, so there every conversion fails, DOCX included (the sync endpoint then answers
HTTP 404 "Task result not found"). DOCX, PPTX, HTML and Markdown go through docling's SimplePipeline, which uses no
model: with the eager build skipped they convert as in a deployment that has the weights, and a PDF still fails,
when docling builds its pipeline for it, with docling's own error.
"""

import sys

from docling.datamodel.base_models import InputFormat
from docling.document_converter import DocumentConverter

_initialize_pipeline = DocumentConverter.initialize_pipeline


def _initialize_pipeline_except_pdf(self, format):
    if format == InputFormat.PDF:
        return None
    return _initialize_pipeline(self, format)


DocumentConverter.initialize_pipeline = _initialize_pipeline_except_pdf

from docling_serve.__main__ import main  # noqa: E402  (after the patch, so the app sees it)

if __name__ == "__main__":
    sys.argv[0] = "docling-serve"
    sys.exit(main())
