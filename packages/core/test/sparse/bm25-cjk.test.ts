import { describe, expect, it } from 'vitest';
import { encodeDocument, encodeQuery } from '../../src/sparse/bm25-encoder.ts';
import type { Bm25Language } from '../../src/sparse/languages/bm25-languages.ts';
import { characterBigrams, HAS_CJ_DICTIONARY, hanKanaTerms } from '../../src/sparse/languages/cjk-terms.ts';
import { SparseIndex } from '../../src/sparse/sparse-index.ts';
import { bm25Stems } from '../../src/sparse/tokenize.ts';

/** Passages written for this test (technical documentation, as a Chinese or Japanese team would write it). */
const PASSAGES: Record<string, string> = {
  'zh-backup': '每天凌晨两点，备份任务会把向量数据库的快照上传到对象存储，并保留最近三十天的版本。',
  'zh-rerank': '重排序服务接收查询和候选段落，用交叉编码器重新打分，只返回得分最高的五个结果。',
  'zh-auth': '调用检索接口时必须在请求头中携带访问令牌，令牌过期后需要向管理员重新申请。',
  'zh-chunk': '文档在入库前按标题切分成片段，每个片段不超过一千二百个字符，相邻片段之间有重叠。',
  'ja-deploy': '新しいバージョンをデプロイする前に、ステージング環境で負荷試験を実施してください。',
  'ja-alert': 'エラー率が五パーセントを超えると、監視システムが当番のエンジニアに通知を送ります。',
  'ja-language': '検索エンジンは日本語の文章を単語に分割してから索引を作成します。',
  'ja-cache': '埋め込みの計算結果はキャッシュに保存され、同じ文書を再度取り込むときに再利用されます。',
  'ko-quota': '사용자별 요청 한도는 분당 육십 회이며 한도를 넘으면 잠시 후 다시 시도해야 합니다.',
  'en-k8s': 'The retrieval API runs on Kubernetes with three replicas behind a Service.',
};

const QUESTIONS: [string, string][] = [
  ['向量数据库的快照多久备份一次？', 'zh-backup'],
  ['重排序用的是什么模型？', 'zh-rerank'],
  ['访问令牌过期了怎么办', 'zh-auth'],
  ['片段最多多少个字符', 'zh-chunk'],
  ['デプロイ前に何をすればいいですか', 'ja-deploy'],
  ['エラー率が高いとき誰に通知されますか', 'ja-alert'],
  ['日本語の文章はどうやって索引されますか', 'ja-language'],
  ['埋め込みはキャッシュされますか', 'ja-cache'],
  ['요청 한도를 넘으면 어떻게 되나요', 'ko-quota'],
  ['How many replicas does the retrieval API run on Kubernetes?', 'en-k8s'],
];

function topHit(language: Bm25Language, question: string): string | undefined {
  const index = new SparseIndex();
  for (const [id, text] of Object.entries(PASSAGES)) index.upsert(id, encodeDocument(text, language));
  return index.search(encodeQuery(question, language), 1)[0]?.id;
}

describe('BM25_LANGUAGE=cjk makes Chinese, Japanese and Korean text searchable', () => {
  it('runs on an ICU with the CJ dictionary (Node ships full ICU)', () => {
    expect(HAS_CJ_DICTIONARY).toBe(true);
  });

  it.each(QUESTIONS)('finds the passage for %s', (question, expected) => {
    expect(topHit('cjk', question)).toBe(expected);
  });

  it('the English analyzer keeps a CJK sentence as one token: no Chinese or Japanese question finds its passage', () => {
    expect(bm25Stems('向量数据库的快照多久备份一次', 'english')).toHaveLength(1);
    const found = QUESTIONS.filter(([question, expected]) => topHit('english', question) === expected);
    // Korean puts spaces between words, so one exact word (한도를) still matches there.
    expect(found.map(([, expected]) => expected)).toEqual(['ko-quota', 'en-k8s']);
  });

  it('segments words, drops particles and function words, and stems the Latin words of the same text', () => {
    expect(bm25Stems('Qdrant的集合使用RRF融合', 'cjk')).toEqual(['qdrant', '集合', '使用', 'rrf', '融合']);
    expect(bm25Stems('ベクトルデータベースはハイブリッド検索をサポートしています', 'cjk')).toEqual(['ベクトル', 'データベース', 'ハイブリッド', '検索', 'サポート']);
    expect(bm25Stems('Kubernetes集群中的replicas', 'cjk')).toEqual(['kubernet', '集群', '中的', 'replica']);
  });

  it('cuts Hangul and, without a dictionary, Han text into overlapping bigrams', () => {
    expect(bm25Stems('검색을', 'cjk')).toEqual(['검색', '색을']);
    expect(characterBigrams('数据库')).toEqual(['数据', '据库']);
    expect(characterBigrams('库')).toEqual(['库']);
    expect(hanKanaTerms('向量数据库', false)).toEqual(['向量', '量数', '数据', '据库']);
  });
});
