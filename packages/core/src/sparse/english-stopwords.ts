/**
 * The English stopword list fastembed's `Bm25` loads (`english.txt` of the HF repo Qdrant/bm25,
 * NLTK's list, 179 words, in its order). Entries containing `'` can never match a token; kept for fidelity.
 * https://github.com/qdrant/fastembed/blob/main/fastembed/sparse/bm25.py (`_load_stopwords`)
 * Kept in code rather than read from a file, so that the compiled bundles carry it.
 */
const NLTK_ENGLISH_STOPWORDS = `
  i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves he him
  his himself she she's her hers herself it it's its itself they them their theirs themselves what which who
  whom this that that'll these those am is are was were be been being have has had having do does did doing a
  an the and but if or because as until while of at by for with about against between into through during
  before after above below to from up down in out on off over under again further then once here there when
  where why how all any both each few more most other some such no nor not only own same so than too very s t
  can will just don don't should should've now d ll m o re ve y ain aren aren't couldn couldn't didn didn't
  doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't
  shan shan't shouldn shouldn't wasn wasn't weren weren't won won't wouldn wouldn't
`;

export const ENGLISH_STOPWORDS: ReadonlySet<string> = new Set(NLTK_ENGLISH_STOPWORDS.split(/\s+/).filter((word) => word.length > 0));
