// The safetensors reader and writer, and the transformers layout's import: a round trip keeps
// every value; 16-bit dtypes widen exactly; every kind of damaged or lying file, and every model
// mismatch, is refused naming the file and the tensor (or the config key).
#include "backend/trainer/transformers/hf_layout.h"
#include "backend/trainer/transformers/safetensors.h"
#include "backend/trainer/common/rng.h"

#include <QTemporaryDir>
#include <QTest>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

using namespace trellis::trainer;

namespace {

// A file from a hand-written header and data, as a writer that lies would make it.
void writeRaw(const std::string &path, const std::string &header, const std::string &data, std::int64_t lengthField = -1)
{
    std::ofstream o(path, std::ios::binary | std::ios::trunc);
    const std::uint64_t n = lengthField < 0 ? header.size() : static_cast<std::uint64_t>(lengthField);
    for (int i = 0; i < 8; ++i)
        o.put(static_cast<char>(n >> (8 * i)));
    o << header << data;
}

GptConfig tinyGpt()
{
    GptConfig c{16, 8, 1, 8, 2, 16};
    return c;
}

} // namespace

class TstSafetensors : public QObject {
    Q_OBJECT
private slots:
    void roundTrip()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("a.safetensors")).toStdString();
        SafetensorsFile f;
        f.tensors["b"] = {{2, 3}, {1, 2, 3, 4, 5, 6}};
        f.tensors["a"] = {{1}, {-0.5f}};
        f.metadata["format"] = "pt";
        QCOMPARE(QString::fromStdString(writeSafetensors(path, f)), QString());
        SafetensorsFile back;
        QCOMPARE(QString::fromStdString(readSafetensors(path, back)), QString());
        QVERIFY(back.tensors.size() == 2 && back.tensors["b"].values == f.tensors["b"].values);
        QCOMPARE(back.tensors["b"].shape, (std::vector<std::int64_t>{2, 3}));
        QCOMPARE(back.metadata["format"], std::string("pt"));
        // The data starts 8-byte aligned (the header is padded with spaces).
        std::ifstream in(path, std::ios::binary);
        unsigned char len[8];
        in.read(reinterpret_cast<char *>(len), 8);
        QCOMPARE(int(len[0]) % 8, 0);
    }

    void halfPrecisionWidens()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("h.safetensors")).toStdString();
        // F16 1.0 = 0x3c00, -2.0 = 0xc000, 2^-24 (subnormal) = 0x0001; BF16 1.5 = 0x3fc0.
        const std::string data("\x00\x3c\x00\xc0\x01\x00\xc0\x3f", 8);
        writeRaw(path, R"({"h":{"dtype":"F16","shape":[3],"data_offsets":[0,6]},"b":{"dtype":"BF16","shape":[1],"data_offsets":[6,8]}})", data);
        SafetensorsFile f;
        QCOMPARE(QString::fromStdString(readSafetensors(path, f)), QString());
        QCOMPARE(f.tensors["h"].values, (std::vector<float>{1.0f, -2.0f, 5.9604645e-08f}));
        QCOMPARE(f.tensors["b"].values, (std::vector<float>{1.5f}));
    }

    void refusesDamagedFiles_data()
    {
        QTest::addColumn<QString>("header");
        QTest::addColumn<int>("dataBytes");
        QTest::addColumn<qint64>("lengthField");
        QTest::addColumn<QString>("message");
        const QString ok = QStringLiteral(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})");
        QTest::newRow("truncated data") << ok << 4 << qint64(-1) << "tensor w: data_offsets [0, 8] lie outside the 4 bytes of data";
        QTest::newRow("length lies") << ok << 8 << qint64(1 << 20) << "header length 1048576 does not fit the file";
        QTest::newRow("not json") << QStringLiteral("{\"w\": [") << 0 << qint64(-1) << "the header is not valid JSON";
        QTest::newRow("unknown dtype") << QStringLiteral(R"({"w":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})") << 8 << qint64(-1)
                                       << "tensor w: dtype I64 is not a floating-point type this reader takes (F32, F64, F16, BF16)";
        QTest::newRow("shape and size disagree") << QStringLiteral(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})") << 8
                                                 << qint64(-1) << "tensor w: 8 bytes of data for shape of 3 F32 values (12 bytes)";
        QTest::newRow("overlap") << QStringLiteral(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})")
                                 << 8 << qint64(-1) << "tensor b starts at byte 4 of the data, expected 8 (it overlaps the tensor before)";
        QTest::newRow("trailing bytes") << ok << 12 << qint64(-1) << "4 bytes of data after the last tensor";
        QTest::newRow("negative size") << QStringLiteral(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})") << 8 << qint64(-1)
                                       << "tensor w: shape holds a negative or non-integer size";
        QTest::newRow("missing fields") << QStringLiteral(R"({"w":{"dtype":"F32"}})") << 0 << qint64(-1)
                                        << "tensor w: needs dtype, shape and two data_offsets";
    }
    void refusesDamagedFiles()
    {
        QFETCH(QString, header);
        QFETCH(int, dataBytes);
        QFETCH(qint64, lengthField);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("bad.safetensors")).toStdString();
        writeRaw(path, header.toStdString(), std::string(static_cast<std::size_t>(dataBytes), '\0'), lengthField);
        SafetensorsFile f;
        const QString error = QString::fromStdString(readSafetensors(path, f));
        QVERIFY2(error.startsWith(QString::fromStdString(path) + QStringLiteral(": ")), qPrintable(error));
        QVERIFY2(error.contains(message), qPrintable(error));
    }

    // The transformers layout: export then import gives the same vector; a missing, misshapen or
    // foreign tensor and a config that disagrees with the plan are refused by name.
    void importChecksTheModel()
    {
        QTemporaryDir tmp;
        const std::string dir = tmp.filePath(QStringLiteral("hf")).toStdString();
        const GptConfig c = tinyGpt();
        GptModel<float> model(c);
        model.initialize(3);
        const std::vector<float> whole(model.parameters().begin(), model.parameters().end());
        QCOMPARE(QString::fromStdString(exportHuggingFace(c, whole, dir, "test")), QString());
        std::vector<float> back;
        QCOMPARE(QString::fromStdString(importHuggingFace(c, dir, back)), QString());
        QVERIFY(back == whole);
        // A wider model than the plan's: the config names the key.
        GptConfig wider = c;
        wider.hidden = 16;
        QVERIFY(QString::fromStdString(importHuggingFace(wider, dir, back)).endsWith(QStringLiteral("config.json: n_embd is 8 but the plan's model.hidden is 16")));
        GptConfig llama = c;
        llama.llama = true;
        QVERIFY(QString::fromStdString(importHuggingFace(llama, dir, back)).contains(QStringLiteral("model_type is 'gpt2' but the plan's model.arch needs 'llama'")));
        // Without the config the tensors' shapes decide.
        std::filesystem::remove(std::filesystem::path(dir) / "config.json");
        QVERIFY(QString::fromStdString(importHuggingFace(wider, dir, back)).contains(QStringLiteral("tensor transformer.wte.weight has shape [16, 8] but the plan's model needs [16, 16]")));
        SafetensorsFile f;
        const std::string path = dir + "/model.safetensors";
        QCOMPARE(QString::fromStdString(readSafetensors(path, f)), QString());
        f.tensors.erase("transformer.h.0.mlp.c_fc.bias");
        f.tensors["transformer.h.0.extra"] = {{1}, {0.0f}};
        QCOMPARE(QString::fromStdString(writeSafetensors(path, f)), QString());
        QCOMPARE(QString::fromStdString(importHuggingFace(c, dir, back)),
                 QString::fromStdString(path + ": tensor transformer.h.0.mlp.c_fc.bias is missing"));
        f.tensors["transformer.h.0.mlp.c_fc.bias"] = {{16}, std::vector<float>(16, 0.0f)};
        QCOMPARE(QString::fromStdString(writeSafetensors(path, f)), QString());
        QCOMPARE(QString::fromStdString(importHuggingFace(c, dir, back)),
                 QString::fromStdString(path + ": tensor transformer.h.0.extra is not part of the plan's gpt model"));
        QVERIFY(QString::fromStdString(importHuggingFace(c, tmp.filePath(QStringLiteral("nowhere")).toStdString(), back)).contains(QStringLiteral("model.safetensors: missing")));
        GptConfig moe = c;
        moe.experts = 2;
        QVERIFY(QString::fromStdString(importHuggingFace(moe, dir, back)).contains(QStringLiteral("mixture-of-experts")));
    }
};

QTEST_GUILESS_MAIN(TstSafetensors)
#include "tst_safetensors.moc"
