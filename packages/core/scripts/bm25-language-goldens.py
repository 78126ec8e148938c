#!/usr/bin/env python3
"""Golden stems and BM25 vectors for every Snowball language of fastembed's `Bm25(language=...)`.

Runs fastembed's own `Bm25(language=...)` (fastembed 0.9.1 and the stemmer it calls, py-rust-stemmers 0.1.8, both
pinned in scripts/python/bm25-reference.txt). Its stopword files (`<language>.txt` of the HF repo Qdrant/bm25)
cannot be downloaded here: the model folder handed to it (`specific_model_path`) holds the lists of
packages/core/src/sparse/languages/nltk-stopwords.ts instead (an input of both sides; what they cover is said
there). Writes packages/core/test/fixtures/bm25-languages/<lang>.json:
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
import tempfile
from importlib.metadata import version

from fastembed.common.utils import remove_non_alphanumeric
from fastembed.sparse.bm25 import Bm25
from fastembed.sparse.utils.tokenizer import SimpleTokenizer
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


def tokenize(text: str) -> list[str]:
    return SimpleTokenizer.tokenize(remove_non_alphanumeric(text))


def load_stopwords() -> dict[str, list[str]]:
    source = open(STOPWORDS_TS, encoding='utf-8').read()
    return {lang: body.split() for lang, body in re.findall(r"(\w+): words\(`([^`]*)`\)", source)}


def model_folder(stopwords: dict[str, list[str]]) -> str:
    """What Bm25 reads from the Qdrant/bm25 snapshot: config.json (its model_file) and <language>.txt."""
    folder = tempfile.mkdtemp(prefix='bm25-model-')
    with open(os.path.join(folder, 'config.json'), 'w') as f:
        f.write('{}')
    for language, words in stopwords.items():
        with open(os.path.join(folder, f'{language}.txt'), 'w', encoding='utf-8') as f:
            f.write('\n'.join(words) + '\n')
    return folder


def seed_paragraphs() -> list[str]:
    paragraphs = []
    for path in sorted(glob.glob(os.path.join(SEEDS, '000_*.txt')) + glob.glob(os.path.join(SEEDS, '003_*.txt'))):
        text = open(path, encoding='utf-8').read()
        paragraphs += [p.strip() for p in re.split(r"\n\s*\n", text) if len(p.strip()) > 40]
    return paragraphs


def main() -> None:
    stopwords = load_stopwords()
    folder = model_folder(stopwords)
    os.makedirs(OUT, exist_ok=True)
    french_paragraphs = seed_paragraphs()
    for language, code in LANGUAGES.items():
        bm25 = Bm25('Qdrant/bm25', language=language, specific_model_path=folder)
        stem_word = SnowballStemmer(language).stem_word
        words = [w for w in dict.fromkeys(w.lower() for w in top_n_list(code, WORDS_PER_LANGUAGE)) if re.fullmatch(r"\w+", w)]
        if language == 'french':
            words += [t for t in dict.fromkeys(t for p in french_paragraphs for t in tokenize(p)) if t not in set(words)]
        rng = random.Random(f'bm25-goldens-{language}')
        texts = (french_paragraphs if language == 'french' else []) + WRITTEN.get(language, [])
        texts += [' '.join(rng.choice(words[:600]) for _ in range(n)) for n in (5, 40, 120, 300)]
        texts += [' '.join(words[i:i + 60]) for i in range(0, 600, 60)]
        cases = []
        for text in texts:
            document = next(iter(bm25.embed([text])))
            query = next(iter(bm25.query_embed(text)))
            cases.append({'text': text, 'stems': bm25._stem(tokenize(text)),
                          'document': {'indices': document.indices.tolist(), 'values': [float(v) for v in document.values.tolist()]},
                          'query': sorted(query.indices.tolist())})
        golden = {
            'language': language,
            'reference': f"fastembed {version('fastembed')} Bm25, py-rust-stemmers {version('py-rust-stemmers')}, wordfreq {version('wordfreq')} (top {WORDS_PER_LANGUAGE} '{code}')",
            'stopwords': len(bm25.stopwords),
            'stems': [[w, stem_word(w)] for w in words],
            'cases': cases,
        }
        with open(os.path.join(OUT, f'{language}.json'), 'w', encoding='utf-8') as f:
            json.dump(golden, f, ensure_ascii=False, separators=(',', ':'))
            f.write('\n')
        print(f'{language}: {len(words)} words, {len(cases)} cases, {len(bm25.stopwords)} stopwords')


if __name__ == '__main__':
    main()
