#!/usr/bin/env python3
"""Golden stems and BM25 vectors for every Snowball language of fastembed's `Bm25(language=...)`.

Reproduces fastembed/sparse/bm25.py (qdrant/fastembed, algorithm unchanged since v0.4.1) with the stemmer it
calls, py_rust_stemmers.SnowballStemmer(language) (pinned in scripts/python/bm25-reference.txt), and the
stopword lists of packages/core/src/sparse/languages/nltk-stopwords.ts (read from that file: the lists are an
input of both sides; what they cover is said there). Writes packages/core/test/fixtures/bm25-languages/<lang>.json:
  stems:  [word, stem] for the language's most frequent words (wordfreq top list) and, for French, every
          token of the seed's French articles (../shared/seeds/000_*.txt, 003_*.txt);
  cases:  texts (paragraphs of the French seeds; sentences written for this file; word sequences drawn from the
          frequency list, stopwords and repeats included) with their stems, document vector in fastembed's
          emission order, and query indices.

Run:  python=$(scripts/python-env.sh bm25-reference) && $python packages/core/scripts/bm25-language-goldens.py [OUT_DIR]
"""
from __future__ import annotations

import glob
import json
import os
import random
import re
import sys
from collections import defaultdict
from importlib.metadata import version

import mmh3
from py_rust_stemmers import SnowballStemmer
from wordfreq import top_n_list

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
# The output folder: the committed fixtures, or the folder given as the first argument (the real test compares them).
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, 'packages/core/test/fixtures/bm25-languages')
STOPWORDS_TS = os.path.join(ROOT, 'packages/core/src/sparse/languages/nltk-stopwords.ts')
SEEDS = os.path.join(ROOT, '..', 'shared', 'seeds')

# fastembed supported_languages minus english (pinned by ../shared/reference) ; wordfreq codes.
LANGUAGES = {
    'arabic': 'ar', 'danish': 'da', 'dutch': 'nl', 'finnish': 'fi', 'french': 'fr', 'german': 'de',
    'greek': 'el', 'hungarian': 'hu', 'italian': 'it', 'norwegian': 'nb', 'portuguese': 'pt',
    'romanian': 'ro', 'russian': 'ru', 'spanish': 'es', 'swedish': 'sv', 'tamil': 'ta', 'turkish': 'tr',
}
K, B, AVG_LEN, TOKEN_MAX_LENGTH = 1.2, 0.75, 256.0, 40
WORDS_PER_LANGUAGE = 4000

# Sentences written for these goldens (technical documentation register), one list per language.
WRITTEN = {
    'french': ["L'index d'un collection est reconstruit quand les modèles changent ; qu'en est-il des vecteurs creux ?",
               "Les équipes déploient l'API de recherche hybride sur Kubernetes avec des réplicas et des sondes de santé."],
    'german': ["Die Vektordatenbank speichert dichte und dünnbesetzte Vektoren; die Suchergebnisse werden mit RRF zusammengeführt.",
               "Wenn das Einbettungsmodell gewechselt wird, muss die Sammlung neu aufgebaut werden, damit Abfragen passen."],
    'spanish': ["La base de datos vectorial almacena vectores densos y dispersos; los resultados se fusionan con RRF.",
                "Cuando se cambia el modelo de incrustaciones, hay que reconstruir la colección para que las consultas coincidan."],
    'italian': ["L'indice dell'archivio viene ricostruito quando cambiano i modelli di incorporamento delle frasi."],
    'portuguese': ["As equipes implantam a API de busca híbrida no Kubernetes com réplicas e verificações de saúde."],
    'dutch': ["De vectordatabase slaat dichte en ijle vectoren op; de zoekresultaten worden met RRF samengevoegd."],
    'russian': ["Векторная база данных хранит плотные и разреженные векторы; результаты поиска объединяются методом RRF."],
    'swedish': ["Vektordatabasen lagrar täta och glesa vektorer; sökresultaten slås samman med RRF."],
    'greek': ["Η ΒΑΣΗ ΔΕΔΟΜΕΝΩΝ αποθηκεύει πυκνά και αραιά διανύσματα· τα αποτελέσματα αναζήτησης συγχωνεύονται."],
    'turkish': ["İstanbul'daki ekip vektör veritabanını Kubernetes üzerinde çalıştırıyor ve sonuçları birleştiriyor."],
}


def remove_non_alphanumeric(text: str) -> str:  # fastembed/common/utils.py
    return re.sub(r"[^\w\s]", " ", text, flags=re.UNICODE)


def tokenize(text: str) -> list[str]:  # fastembed/sparse/utils/tokenizer.py SimpleTokenizer
    text = re.sub(r"[^\w]", " ", text.lower())
    text = re.sub(r"\s+", " ", text)
    return text.strip().split()


def load_stopwords() -> dict[str, set[str]]:
    source = open(STOPWORDS_TS, encoding='utf-8').read()
    return {lang: set(body.split()) for lang, body in re.findall(r"(\w+): words\(`([^`]*)`\)", source)}


class Bm25:
    def __init__(self, language: str, stopwords: set[str]):
        self.stem_word = SnowballStemmer(language).stem_word
        self.stopwords = stopwords
        self.punctuation = {chr(i) for i in range(sys.maxunicode) if __import__('unicodedata').category(chr(i)).startswith('P')}

    def stems(self, text: str) -> list[str]:  # Bm25._stem after raw_embed's tokenisation
        out = []
        for token in tokenize(remove_non_alphanumeric(text)):
            lower = token.lower()
            if token in self.punctuation or lower in self.stopwords or len(token) > TOKEN_MAX_LENGTH:
                continue
            stem = self.stem_word(lower)
            if stem:
                out.append(stem)
        return out

    def document(self, stems: list[str]) -> dict[int, float]:  # Bm25._term_frequency
        counter: defaultdict[str, int] = defaultdict(int)
        for s in stems:
            counter[s] += 1
        tf: dict[int, float] = {}
        for s in counter:
            tid = abs(mmh3.hash(s))
            tf[tid] = counter[s] * (K + 1)
            tf[tid] /= counter[s] + K * (1 - B + B * len(stems) / AVG_LEN)
        return tf


def seed_paragraphs() -> list[str]:
    paragraphs = []
    for path in sorted(glob.glob(os.path.join(SEEDS, '000_*.txt')) + glob.glob(os.path.join(SEEDS, '003_*.txt'))):
        text = open(path, encoding='utf-8').read()
        paragraphs += [p.strip() for p in re.split(r"\n\s*\n", text) if len(p.strip()) > 40]
    return paragraphs


def main() -> None:
    stopwords = load_stopwords()
    os.makedirs(OUT, exist_ok=True)
    french_paragraphs = seed_paragraphs()
    for language, code in LANGUAGES.items():
        bm25 = Bm25(language, stopwords.get(language, set()))
        words = [w for w in dict.fromkeys(w.lower() for w in top_n_list(code, WORDS_PER_LANGUAGE)) if re.fullmatch(r"\w+", w)]
        if language == 'french':
            words += [t for t in dict.fromkeys(t for p in french_paragraphs for t in tokenize(remove_non_alphanumeric(p))) if t not in set(words)]
        rng = random.Random(f'bm25-goldens-{language}')
        texts = (french_paragraphs if language == 'french' else []) + WRITTEN.get(language, [])
        texts += [' '.join(rng.choice(words[:600]) for _ in range(n)) for n in (5, 40, 120, 300)]
        texts += [' '.join(words[i:i + 60]) for i in range(0, 600, 60)]
        cases = []
        for text in texts:
            stems = bm25.stems(text)
            doc = bm25.document(stems)
            cases.append({'text': text, 'stems': stems,
                          'document': {'indices': list(doc.keys()), 'values': list(doc.values())},
                          'query': sorted({abs(mmh3.hash(s)) for s in stems})})
        golden = {
            'language': language,
            'reference': f"py-rust-stemmers {version('py-rust-stemmers')}, mmh3 {version('mmh3')}, wordfreq {version('wordfreq')} (top {WORDS_PER_LANGUAGE} '{code}')",
            'stopwords': len(bm25.stopwords),
            'stems': [[w, bm25.stem_word(w)] for w in words],
            'cases': cases,
        }
        with open(os.path.join(OUT, f'{language}.json'), 'w', encoding='utf-8') as f:
            json.dump(golden, f, ensure_ascii=False, separators=(',', ':'))
            f.write('\n')
        print(f'{language}: {len(words)} words, {len(cases)} cases, {len(bm25.stopwords)} stopwords')


if __name__ == '__main__':
    main()
